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

    /// Returns once the queue has run dry with no job enqueued meanwhile, three barriers in a
    /// row: every task on the executor is then suspended, waiting for something from outside it.
    ///
    /// One quiet barrier was not always enough on a loaded machine (a test saw a body not yet
    /// started that started later): a wake-up can reach the executor from another thread just
    /// after its queue drains. The thread yields between barriers so that such a wake-up lands.
    func settle() {
        var quietRounds = 0
        while quietRounds < 3 {
            let before = lock.withLock { enqueued }
            queue.sync {}
            sched_yield()
            queue.sync {}
            quietRounds = lock.withLock({ enqueued }) == before ? quietRounds + 1 : 0
        }
    }
}
