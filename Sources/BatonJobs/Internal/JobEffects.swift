import BatonLocks
import Dispatch

/// What a transition under ``JobGraph/lock`` decided should happen once the lock is released:
/// the "effects outside" half of the state machines. Callbacks, wake-ups and new workers all
/// start from ``perform()``, which runs without any Baton lock held.
///
/// Three arrays rather than one per kind of effect: a `JobEffects` is made and dropped on every
/// public call, and on the paths of every job most of it stays empty.
struct JobEffects {
    /// One thing to do after unlock.
    enum Action {
        /// Wake a thread or task.
        case resume(JobWaiter)
        /// Start a worker: a slot in the queue has been taken for it.
        case spawn(QueueCore, JobQualityOfService)
        /// Release the body (and what it captures) of a job that finished without running.
        case releaseBody(Job)
        /// Tell an executing job's running body of a cancellation (an `AsyncJob`'s task).
        case cancelBody(Job)
        /// Let go of the retain a queue's members held; this may free a queue its owner dropped.
        case releaseQueue(QueueCore)
    }

    /// Finished jobs whose completion handler and observers have nothing to run: finalized
    /// under the lock by ``JobGraph/finalizePendingLocked(_:)``. A worklist, so a cancellation
    /// running down a long chain is a loop, not a recursion.
    var toFinalize: [Job] = []
    /// Jobs whose outbox this thread must drain (it became their deliverer).
    var deliver: [Job] = []
    /// The rest, in the order it was recorded.
    var actions: [Action] = []

    /// Does everything recorded, including what delivering an outbox records in turn.
    mutating func perform() {
        while true {
            if !actions.isEmpty {
                let pending = actions
                actions.removeAll(keepingCapacity: true)
                for action in pending {
                    switch action {
                    case .resume(let waiter): waiter.resume()
                    case .spawn(let queue, let qos): queue.dispatchWorker(qos: qos, first: nil)
                    case .releaseBody(let job): job.releaseBody()
                    case .cancelBody(let job): job.cancelRunningBody()
                    case .releaseQueue: break  // dropped with `pending`
                    }
                }
            }
            guard let job = deliver.popLast() else { return }
            JobGraph.drainOutbox(of: job, &self)
        }
    }
}

/// A thread or task waiting for a job or a queue to finish.
enum JobWaiter {
    case semaphore(DispatchSemaphore)
    case continuation(CheckedContinuation<Void, Never>)
    /// A wait with a deadline and cancellation: a shutdown's grace period.
    case asyncSemaphore(AsyncSemaphore)

    func resume() {
        switch self {
        case .semaphore(let semaphore): semaphore.signal()
        case .continuation(let continuation): continuation.resume()
        case .asyncSemaphore(let semaphore): _ = semaphore.signal()
        }
    }

    /// Whether this is the waiter that blocks on `semaphore`.
    func waits(on semaphore: DispatchSemaphore) -> Bool {
        if case .semaphore(let own) = self { return own === semaphore }
        return false
    }

    /// Whether this is the waiter that waits on `semaphore`.
    func waits(on semaphore: AsyncSemaphore) -> Bool {
        if case .asyncSemaphore(let own) = self { return own === semaphore }
        return false
    }
}

extension [JobWaiter] {
    /// Takes out the waiter that blocks on `semaphore` (a timed wait giving up); `false` if it is
    /// not here, because the job or queue it waited for has already taken its waiters out to
    /// wake them.
    mutating func remove(waitingOn semaphore: DispatchSemaphore) -> Bool {
        guard let index = firstIndex(where: { $0.waits(on: semaphore) }) else { return false }
        remove(at: index)
        return true
    }

    /// Takes out the waiter that waits on `semaphore` (a grace period that ran out); `false` if
    /// the queue has taken it out to wake it.
    mutating func remove(waitingOn semaphore: AsyncSemaphore) -> Bool {
        guard let index = firstIndex(where: { $0.waits(on: semaphore) }) else { return false }
        remove(at: index)
        return true
    }
}

/// A job, held weakly: an entry in a dependency's list of watchers.
struct WeakJob {
    weak var job: Job?
}
