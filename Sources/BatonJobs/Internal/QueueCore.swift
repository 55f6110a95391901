import BatonLocks
import Dispatch

/// The shared part of a ``JobQueue``: its scheduling state and its workers.
///
/// Workers are Dispatch work items on `DispatchQueue.global(qos:)`, started only while fewer
/// than `maxConcurrentJobs` slots are in use; each one drains ready jobs in a loop, so the
/// cost per job stays near one `DispatchQueue.async` even though most jobs start no dispatch.
final class QueueCore {
    let name: String
    let maxConcurrentJobs: Int
    let qualityOfService: JobQualityOfService
    /// Guarded by `JobGraph.lock`.
    @exclusivity(unchecked) var machine = QueueSchedulingState()

    /// How many jobs a worker runs before it hands its slot to a fresh dispatch, so a busy
    /// queue does not keep one Dispatch thread from other work forever.
    static let jobsPerDispatch = 256

    init(name: String, maxConcurrentJobs: Int, qualityOfService: JobQualityOfService) {
        self.name = name
        self.maxConcurrentJobs = maxConcurrentJobs
        self.qualityOfService = qualityOfService
    }

    // MARK: Membership (all under JobGraph.lock)

    /// Takes ownership of a job outside any queue: it is ready, waiting, or (cancelled
    /// already) finished at once.
    ///
    /// A queue with members keeps itself alive, so that jobs can point to it without retaining
    /// it and a queue its owner dropped still finishes its jobs: the first member takes a
    /// retain that the last one to leave gives back (after unlock, through `fx`).
    func enqueueLocked(_ job: Job, _ fx: inout JobEffects) {
        if machine.memberCount == 0 { _ = Unmanaged.passUnretained(self).retain() }
        job.machine.queueReference = Unmanaged.passUnretained(self)
        machine.join(job)
        JobGraph.linkLocked(job, strongly: true)
        if let reason = job.machine.cancellation {
            job.machine.phase = .waiting
            JobGraph.finishLocked(job, .cancelled(reason), &fx)
        } else if job.machine.unfinishedDependencies == 0 {
            JobGraph.makeReadyLocked(job, in: self, emit: false, &fx)
        } else {
            job.machine.phase = .waiting
        }
    }

    func removeMemberLocked(_ job: Job, _ fx: inout JobEffects) {
        machine.leave(job)
        guard machine.memberCount == 0 else { return }
        if !machine.waiters.isEmpty {
            fx.actions.append(contentsOf: machine.waiters.map(JobEffects.Action.resume))
            machine.waiters = []
        }
        // The members' retain passes to `fx`, which lets go of it after unlock.
        fx.actions.append(.releaseQueue(Unmanaged.passUnretained(self).takeRetainedValue()))
    }

    /// Starts workers for ready jobs that no worker is about to pick up, within the limit.
    func requestWorkersLocked(_ fx: inout JobEffects) {
        guard !machine.suspended else { return }
        while machine.active < maxConcurrentJobs && machine.readyCount > machine.searching {
            machine.active += 1
            machine.searching += 1
            fx.actions.append(.spawn(self, qualityOfService))
        }
    }

    // MARK: Workers

    private enum Next {
        case run(Job)
        /// Run this job on a new dispatch at this quality of service; the slot goes with it.
        case handOff(Job, JobQualityOfService)
        case stop
    }

    func dispatchWorker(qos: JobQualityOfService, first: Job?) {
        DispatchQueue.global(qos: qos.dispatchQoS).async {
            self.work(qos: qos, first: first)
        }
    }

    /// Called by a searching worker under the lock: takes the next ready job, or gives the slot
    /// back.
    private func nextLocked(qos: JobQualityOfService, budget: Int, _ fx: inout JobEffects) -> Next {
        machine.searching -= 1
        guard !machine.suspended, let job = machine.popReady() else {
            machine.active -= 1
            return .stop
        }
        job.machine.phase = .executing
        job.machine.ran = true
        if job.machine.emit(.executing) { fx.deliver.append(job) }
        let wanted = job.machine.qualityOfService ?? qualityOfService
        if wanted != qos || budget <= 0 { return .handOff(job, wanted) }
        return .run(job)
    }

    private func work(qos: JobQualityOfService, first: Job?) {
        var fx = JobEffects()
        var budget = Self.jobsPerDispatch
        var next: Next
        if let first {
            next = .run(first)
        } else {
            next = JobGraph.lock.withLock { nextLocked(qos: qos, budget: budget, &fx) }
            fx.perform()
        }
        while true {
            // Consumed, so the job moves out of `next` rather than being copied (a retain and a
            // release per job).
            let job: Job
            switch consume next {
            case .stop:
                return
            case .handOff(let handed, let wanted):
                dispatchWorker(qos: wanted, first: handed)
                return
            case .run(let runnable):
                job = runnable
            }
            // Borrowed for the calls: `job` keeps the job alive, and calling a class method on an
            // owned local would retain and release it around the call.
            let finished = Unmanaged.passUnretained(job)._withUnsafeGuaranteedRef { job -> JobOutcome? in
                guard let outcome = job.perform(qos: qos) else { return nil }
                job.releaseBody()
                return outcome
            }
            guard let outcome = finished else {
                return  // an AsyncJob: its task holds the slot now and gives it back when done
            }
            budget -= 1
            let immediate: Next? = JobGraph.lock.withLock {
                // Counted before the release, so no worker is spawned for the job this one takes.
                machine.searching += 1
                JobGraph.finishLocked(job, outcome, &fx, finalizeNow: true)
                JobGraph.finalizePendingLocked(&fx)
                // With observers or a completion to run first, the dependents are released
                // after unlock; pick the next job only after that.
                guard fx.deliver.isEmpty else { return nil }
                return nextLocked(qos: qos, budget: budget, &fx)
            }
            _ = consume job  // a waiter woken below may count on the finished job being released
            fx.perform()
            if let immediate {
                next = immediate
            } else {
                next = JobGraph.lock.withLock { nextLocked(qos: qos, budget: budget, &fx) }
                fx.perform()
            }
        }
    }

    /// An `AsyncJob` of this queue finished: its slot is free again.
    func asyncJobFinishedLocked(_ fx: inout JobEffects) {
        machine.active -= 1
        requestWorkersLocked(&fx)
    }
}

// Every mutable field is guarded by JobGraph.lock; the rest are constants.
extension QueueCore: @unchecked Sendable {}
