import Foundation

/// A task executor that runs its jobs only when the test says: a task that prefers it, once
/// resumed, stays resumed but not running until ``runQueued()``. A test can then act on it (cancel
/// it, say) at the moment between its wake-up and its running, which no timing reaches reliably.
final class HoldingExecutor: TaskExecutor, @unchecked Sendable {  // `lock` guards `jobs`
    private let lock = NSLock()
    private var jobs: [UnownedJob] = []
    private let queue = DispatchQueue(label: "HoldingExecutor")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        lock.withLock { jobs.append(job) }
    }

    /// The jobs waiting to run.
    var queuedCount: Int { lock.withLock { jobs.count } }

    /// Runs the jobs queued now, one after the other, each until its task suspends or ends; the
    /// jobs they queue wait for the next call.
    func runQueued() {
        let now = lock.withLock {
            defer { jobs = [] }
            return jobs
        }
        for job in now { queue.sync { job.runSynchronously(on: self.asUnownedTaskExecutor()) } }
    }
}
