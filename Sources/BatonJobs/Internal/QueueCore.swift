import Atomics
import BatonInternals
import BatonLocks
import Dispatch

/// The shared part of a ``JobQueue``: its scheduling state and its workers.
///
/// Workers are Dispatch work items on `DispatchQueue.global(qos:)` (or on the queue's target),
/// started only while fewer than `maxConcurrentJobs` slots are in use; each one drains ready
/// jobs in a loop, so the cost per job stays near one `DispatchQueue.async` even though most
/// jobs start no dispatch. On a target queue a worker runs one job, so that the target's other
/// work runs between jobs.
///
/// The inbox: ``JobQueue/addJob(priority:_:)`` makes a job nobody else can see yet, with no
/// dependencies, so it can enter the queue without the graph lock. It pushes the job onto
/// `inbox`, a lock-free stack, and takes the lock only when a slot is free (a worker may have
/// to be started). Whoever next holds the lock for this queue (a worker looking for its next
/// job, any other operation on the queue, or one on such a job that changes it) first moves
/// the inbox into the queue, oldest first: from then on the job is an ordinary member. So a
/// busy queue takes its jobs without the thread adding them and the workers contending for the
/// lock, and the workers take them in batches.
///
/// No job is stranded in the inbox: a thread pushes, then reads `slotsInUse`; a worker giving
/// its slot back stores `slotsInUse`, then reads the inbox (both sequentially consistent). One
/// of the two sees the other: the pusher sees a free slot and takes the lock to start a worker,
/// or the worker sees the job and moves it in before it leaves.
///
/// Shutdown closes the inbox: under the lock it swaps the inbox for `closedInbox` and takes
/// in what it held. A push is one compare-and-exchange on the inbox, so it falls on one side
/// of the close: a job pushed before it is among those the shutdown takes in (taken, as any job
/// added before the shutdown), and a push that finds the inbox closed does not happen: that
/// job is refused under the lock.
final class QueueCore {
    let name: String
    let maxConcurrentJobs: Int
    let qualityOfService: JobQualityOfService
    /// The Dispatch queue the workers run on, if not the global queues.
    let target: DispatchQueue?
    /// How many jobs a worker runs before it hands its slot to a fresh dispatch.
    let jobsPerWorker: Int
    /// Whether `target` is the main queue.
    let runsOnMainQueue: Bool
    /// Guarded by `JobGraph.lock`.
    @exclusivity(unchecked) var machine = QueueStateMachine()
    /// Jobs added by `addJob` and not yet moved into the queue, newest first, linked through
    /// ``JobStateMachine/nextMember``; each holds one retain, which becomes its ready FIFO
    /// entry's.
    private let inbox = UnsafeAtomic<Unmanaged<Job>?>.create(nil)
    /// `machine.active`, readable without the lock by a thread that pushed onto the inbox.
    private let slotsInUse = UnsafeAtomic<Int>.create(0)
    /// What the inbox holds once a shutdown closed it, so that no push succeeds after: a job
    /// no queue runs, never retained or released through the inbox.
    private let closedInbox = Unmanaged.passUnretained(closedInboxMarker)

    /// The ``JobQueue`` made for this core, or the one ``JobQueue/current`` made after nobody
    /// held that any more: weak, so that a queue nobody holds goes away while its jobs finish.
    /// Set in the queue's init, then guarded by `JobGraph.lock`.
    weak var owner: JobQueue?

    /// Whether `queue` is the main queue. On Linux `DispatchQueue.main` makes a new object for
    /// the same queue each time, so identity alone cannot tell, and a mark set on the main queue
    /// (`setSpecific`) is set only once the main queue next runs: its label tells.
    static func isMainQueue(_ queue: DispatchQueue) -> Bool {
        queue === DispatchQueue.main || queue.label == DispatchQueue.main.label
    }

    /// How many jobs a worker runs before it hands its slot to a fresh dispatch, so a busy
    /// queue does not keep one Dispatch thread from other work forever.
    static let jobsPerDispatch = 256

    init(name: String, maxConcurrentJobs: Int, qualityOfService: JobQualityOfService, target: DispatchQueue?) {
        self.name = name
        self.maxConcurrentJobs = maxConcurrentJobs
        self.qualityOfService = qualityOfService
        self.target = target
        // On a queue of its own choosing, each job is one work item, so that the target's other
        // work (the main queue's events, say) runs between them.
        jobsPerWorker = target == nil ? Self.jobsPerDispatch : 1
        runsOnMainQueue = target.map(Self.isMainQueue) ?? false
    }

    deinit {
        // A queue with jobs in its inbox is alive (see `submit`), so the inbox is empty.
        inbox.destroy()
        slotsInUse.destroy()
    }

    // MARK: The inbox

    /// Adds `job`, which no other thread can see yet and which has no dependencies. When every
    /// slot is busy, without the lock: the job goes onto the inbox and the workers take it in.
    /// Otherwise (a worker may have to be started) under the lock, as `JobQueue.add` does. The
    /// job is ready in this queue when this returns.
    ///
    /// The inbox needs no retain of the queue: a job is pushed only while every slot is in use,
    /// and a slot's holder keeps the queue alive (a worker's closure holds it; an `AsyncJob` in
    /// flight is a member, and members do). The last holder to give its slot back sees the job
    /// (see the type's notes) and moves it in, where membership keeps the queue alive.
    func submit(_ job: Job) {
        var pushed = false
        if slotsInUse.load(ordering: .sequentiallyConsistent) >= maxConcurrentJobs {
            pushed = push(job)
            // Every slot still busy: a holder will see the job when it looks for work or leaves.
            // A job pushed is taken even if a shutdown begins now: the shutdown takes it in.
            if pushed, slotsInUse.load(ordering: .sequentiallyConsistent) >= maxConcurrentJobs {
                return
            }
        }
        var fx = JobEffects()
        JobGraph.lock.withLock {
            admitInboxLocked()
            if pushed {
                requestWorkersLocked(&fx)
            } else if machine.shutDown {
                // Refused: a job added once shutdown has begun finishes as cancelled at once.
                JobGraph.cancelLocked(job, &fx)
                enqueueLocked(job, &fx)
                JobGraph.finalizePendingLocked(&fx)
            } else {
                enqueueLocked(job, &fx)
            }
        }
        fx.perform()
    }

    /// Pushes `job` onto the inbox, unless a shutdown has closed it; returns whether it did.
    private func push(_ job: Job) -> Bool {
        var top = inbox.load(ordering: .relaxed)
        if isClosed(top) { return false }
        job.machine.enterInbox(of: Unmanaged.passUnretained(self))
        let entry = Unmanaged.passRetained(job)
        while true {
            job.machine.nextMember = top
            let (done, found) = inbox.compareExchange(
                expected: top, desired: entry, ordering: .sequentiallyConsistent)
            if done { return true }
            if isClosed(found) {
                // Closed meanwhile: nobody saw the job, which goes back to how it was.
                job.machine.nextMember = nil
                job.machine.leaveInboxUnpushed()
                entry.release()
                return false
            }
            top = found
        }
    }

    @inline(__always)
    private func isClosed(_ top: Unmanaged<Job>?) -> Bool {
        top?.toOpaque() == closedInbox.toOpaque()
    }

    /// Marks the queue shut down and closes its inbox (see the type's notes), taking in the
    /// jobs pushed before, so that every job added before is a member. Returns whether this call
    /// began the shutdown.
    func beginShutdownLocked() -> Bool {
        guard !machine.shutDown else { return false }
        machine.shutDown = true
        admit(inbox.exchange(closedInbox, ordering: .acquiringAndReleasing))
        return true
    }

    /// Moves the inbox into the queue, oldest first: each job joins the members and its ready
    /// FIFO. Called under the lock before anything reads or changes the queue's members or
    /// ready jobs, and before an inbox job is changed (``JobGraph/admitLocked(_:)``).
    func admitInboxLocked() {
        let top = inbox.load(ordering: .relaxed)
        guard top != nil, !isClosed(top) else { return }
        admit(inbox.exchange(nil, ordering: .acquiring))
    }

    /// Takes in the jobs of an inbox stack, `newest` on top (none if nil or closed).
    private func admit(_ newest: Unmanaged<Job>?) {
        guard let newest, !isClosed(newest) else { return }
        // Newest first on the stack; reversed, so that the FIFOs get them in the order added.
        var oldest: Unmanaged<Job>?
        var next: Unmanaged<Job>? = newest
        while let entry = next {
            next = entry._withUnsafeGuaranteedRef { job in
                let below = job.machine.nextMember
                job.machine.nextMember = oldest
                return below
            }
            oldest = entry
        }
        next = oldest
        while let entry = next {
            entry._withUnsafeGuaranteedRef { job in
                next = job.machine.nextMember
                job.machine.nextMember = nil
                job.machine.leaveInbox()
                if machine.memberCount == 0 { _ = Unmanaged.passUnretained(self).retain() }
                machine.join(job)
            }
            // The inbox's retain passes to the job's entry in its ready FIFO (an inbox job is
            // ready: every change to one moves it in first).
            let job = entry.takeRetainedValue()
            if case .ready(let level) = job.machine.phase { machine.pushReady(job, level) }
        }
    }

    /// `machine.active` changed: publish it for `submit`. A slot given back may leave jobs in
    /// the inbox that their pusher, seeing no free slot, left to a worker: this moves them in
    /// and starts workers for them.
    private func slotsChangedLocked(released: Bool, _ fx: inout JobEffects) {
        slotsInUse.store(machine.active, ordering: .sequentiallyConsistent)
        guard released else { return }
        let top = inbox.load(ordering: .sequentiallyConsistent)
        guard top != nil, !isClosed(top) else { return }
        admitInboxLocked()
        requestWorkersLocked(&fx)
    }

    // MARK: Membership (all under JobGraph.lock)

    /// Takes ownership of a job outside any queue: it is ready, waiting, or (cancelled
    /// already) finished at once.
    ///
    /// A queue with members keeps itself alive, so that jobs can point to it without retaining
    /// it and a queue its owner dropped still finishes its jobs: the first member takes a
    /// retain that the last one to leave gives back (after unlock, through `fx`).
    ///
    /// The caller moves the inbox in first (``admitInboxLocked()``), so that jobs added before
    /// this one go first.
    func enqueueLocked(_ job: Job, _ fx: inout JobEffects) {
        if machine.memberCount == 0 { _ = Unmanaged.passUnretained(self).retain() }
        job.machine.queueReference = Unmanaged.passUnretained(self)
        machine.join(job)
        JobGraph.linkLocked(job, strongly: true)
        switch job.machine.enqueued() {
        case .finishCancelled(let reason): JobGraph.finishLocked(job, .cancelled(reason), &fx)
        case .makeReady: JobGraph.makeReadyLocked(job, in: self, emit: false, &fx)
        case .wait: break
        }
    }

    func removeMemberLocked(_ job: Job, _ outcome: JobStateMachine.FinishedOutcome, _ fx: inout JobEffects) {
        // Jobs pushed since count as added: the queue is not empty while they wait. Moved in
        // before the last member leaves, so that the members' retain of the queue carries over.
        if machine.memberCount == 1 { admitInboxLocked() }
        machine.leave(job, outcome)
        guard machine.memberCount == 0 else { return }
        if !machine.waiters.isEmpty {
            fx.actions.append(contentsOf: machine.waiters.map(JobEffects.Action.resume))
            machine.waiters = []
        }
        // The members' retain passes to `fx`, which lets go of it after unlock.
        fx.actions.append(.releaseQueue(Unmanaged.passUnretained(self).takeRetainedValue()))
    }

    /// Starts the workers that ``QueueStateMachine/admitWorkers(limit:)`` takes slots for.
    func requestWorkersLocked(_ fx: inout JobEffects) {
        let workers = machine.admitWorkers(limit: maxConcurrentJobs)
        guard workers > 0 else { return }
        for _ in 0..<workers { fx.actions.append(.spawn(self, qualityOfService)) }
        slotsChangedLocked(released: false, &fx)
    }

    // MARK: Workers

    private enum Next {
        case run(Job)
        /// Run this job on a new dispatch at this quality of service; the slot goes with it.
        case handOff(Job, JobQualityOfService)
        case stop
    }

    func dispatchWorker(qos: JobQualityOfService, first: Job?) {
        guard let target else {
            DispatchQueue.global(qos: qos.dispatchQoS).async { self.work(qos: qos, first: first) }
            return
        }
        target.async { self.work(qos: qos, first: first) }
    }

    /// Called by a searching worker under the lock: takes the next ready job, or gives the slot
    /// back.
    private func nextLocked(qos: JobQualityOfService, budget: Int, _ fx: inout JobEffects) -> Next {
        admitInboxLocked()
        guard let job = machine.takeNext() else {
            slotsChangedLocked(released: true, &fx)
            return .stop
        }
        if case .drainOutbox = job.machine.startExecuting() { fx.deliver.append(job) }
        // On a target queue the target decides the threads' priority: only the budget hands off.
        let wanted = target == nil ? job.machine.qualityOfService ?? qualityOfService : qos
        if wanted != qos || budget <= 0 { return .handOff(job, wanted) }
        return .run(job)
    }

    private func work(qos: JobQualityOfService, first: Job?) {
        // The queue the jobs run in, for `JobQueue.current`; the thread's own value again after.
        let outer = runningQueueSlot.word
        runningQueueSlot.setWord(Unmanaged.passUnretained(self).toOpaque())
        defer { runningQueueSlot.setWord(outer) }
        var fx = JobEffects()
        var budget = jobsPerWorker
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
                machine.startSearching()
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
        machine.releaseSlot()
        slotsChangedLocked(released: true, &fx)
        requestWorkersLocked(&fx)
    }
}

// Every mutable field is guarded by JobGraph.lock; the rest are constants.
extension QueueCore: @unchecked Sendable {}

/// The core of the queue whose worker the thread is running jobs for (unretained: the worker
/// holds it), for ``JobQueue/current``.
let runningQueueSlot = ThreadSlot.words()

/// The job whose address marks a closed inbox (``QueueCore``).
private let closedInboxMarker: Job = ClosureJob(priority: .normal, doNothing)
