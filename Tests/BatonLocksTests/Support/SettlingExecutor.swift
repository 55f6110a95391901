import Foundation

/// A task executor on one serial dispatch queue that can tell when everything on it has come to
/// rest: every task that prefers it is suspended and no job is queued. A test that runs a call
/// and its child tasks here (child tasks inherit the preference) can then look at what they did
/// at a moment when nothing more is going to happen until the test acts — no sleep, no polling.
final class SettlingExecutor: TaskExecutor, @unchecked Sendable {  // `lock` guards `enqueued`
    private let queue = DispatchQueue(label: "SettlingExecutor")
    private let lock = NSLock()
    private var enqueued = 0

    func enqueue(_ job: consuming ExecutorJob) {
        lock.withLock { enqueued += 1 }
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }

    /// Returns once the queue has run dry with no job enqueued meanwhile: every task on the
    /// executor is then suspended, waiting for something from outside it.
    func settle() {
        while true {
            let before = lock.withLock { enqueued }
            queue.sync {}
            if lock.withLock({ enqueued }) == before { return }
        }
    }
}
