/// What a transition under ``JobGraph/lock`` decided should happen once the lock is released:
/// the "effects outside" half of the state machines. Callbacks, wake-ups and new workers all
/// start from ``perform()``, which runs without any Baton lock held.
struct JobEffects {
    /// Finished jobs whose completion handler and observers have nothing to run: finalized
    /// under the lock by ``JobGraph/finalizePendingLocked(_:)``. A worklist, so a cancellation
    /// running down a long chain is a loop, not a recursion.
    var toFinalize: [Job] = []
    /// Jobs whose outbox this thread must drain (it became their deliverer).
    var deliver: [Job] = []
    /// Threads and tasks to wake.
    var resume: [JobWaiter] = []
    /// Workers to start: a slot in `queue` has been taken for each.
    var spawn: [(queue: QueueCore, qos: JobQualityOfService)] = []
    /// Jobs finished without running whose bodies (and what they capture) can be released.
    var releaseBodies: [Job] = []
    /// Executing jobs whose running body must hear of a cancellation (an `AsyncJob`'s task).
    var cancelBodies: [Job] = []
    /// Queues whose last member left: the retain their members held, released after unlock
    /// (which may free a queue its owner has dropped).
    var emptiedQueues: [QueueCore] = []

    /// Does everything recorded, including what delivering an outbox records in turn.
    mutating func perform() {
        while true {
            if !resume.isEmpty {
                let waiters = resume
                resume.removeAll(keepingCapacity: true)
                for waiter in waiters { waiter.resume() }
            }
            if !spawn.isEmpty {
                let workers = spawn
                spawn.removeAll(keepingCapacity: true)
                for worker in workers { worker.queue.dispatchWorker(qos: worker.qos, first: nil) }
            }
            if !releaseBodies.isEmpty {
                let jobs = releaseBodies
                releaseBodies.removeAll(keepingCapacity: true)
                for job in jobs { job.releaseBody() }
            }
            if !cancelBodies.isEmpty {
                let jobs = cancelBodies
                cancelBodies.removeAll(keepingCapacity: true)
                for job in jobs { job.cancelRunningBody() }
            }
            if !emptiedQueues.isEmpty { emptiedQueues.removeAll(keepingCapacity: true) }
            guard let job = deliver.popLast() else { return }
            JobGraph.drainOutbox(of: job, &self)
        }
    }
}
