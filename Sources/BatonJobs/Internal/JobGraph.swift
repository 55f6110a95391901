import BatonLocks

/// The dependency graph shared by every job and queue: it carries the actions that a job's
/// ``JobStateMachine`` returns across the edges (to dependents, dependencies and the job's
/// queue), and records the effects to perform after unlock in ``JobEffects``.
///
/// Locking: one process-wide ``lock`` guards every job's ``JobStateMachine`` and every queue's
/// ``QueueStateMachine``. Edges cross queues freely, so a per-queue or per-job lock would
/// need an ordering across arbitrary graphs; with one lock there is no order to get wrong and
/// no deadlock, and a cycle check plus the edge insertion it guards are trivially one atomic
/// step. The critical sections are short (a few field updates per job, plus the work that is
/// linear in the edges being touched), no user code and no other Baton lock runs inside it,
/// and Dispatch calls happen after unlock.
enum JobGraph {
    static let lock = Lock(name: "JobQueue.graph")

    /// Moves `job`'s queue's inbox into the queue if `job` is still in it, so that a change to
    /// the job finds it among the queue's members and ready jobs. Every change to a job made
    /// through a reference to it calls this first; reads need not (an inbox job's state is
    /// already what it will be once in the queue), and edges never lead to an inbox job (it
    /// has none until a change adds one).
    static func admitLocked(_ job: Job) {
        guard job.machine.inInbox, let queue = job.machine.queueReference else { return }
        queue._withUnsafeGuaranteedRef { $0.admitInboxLocked() }
    }

    // MARK: Finishing

    /// Moves `job` to finished (``JobStateMachine/finish(_:)``). It is finalized (dependents
    /// released, waiters woken) under this same lock hold by ``finalizePendingLocked(_:)`` when
    /// it has no observer or completion to run first; otherwise after those run, by the thread
    /// that drains its outbox.
    ///
    /// - Parameter finalizeNow: The caller holds `job` and calls ``finalizePendingLocked(_:)``
    ///   next, so a quiet job is finalized here rather than through `fx.toFinalize` (which would
    ///   retain and release it). Never from inside a finalization: that would recurse down a
    ///   chain.
    static func finishLocked(
        _ job: Job, _ bodyOutcome: JobOutcome, _ fx: inout JobEffects, finalizeNow: Bool = false
    ) {
        let (action, leftReady) = job.machine.finish(bodyOutcome)
        if leftReady, let queue = job.machine.queueReference {
            queue._withUnsafeGuaranteedRef { $0.machine.readyCount -= 1 }
        }
        switch action {
        case .finalize:
            if finalizeNow {
                finalizeLocked(job, &fx)
            } else {
                fx.toFinalize.append(job)
            }
        case .drainOutbox: fx.deliver.append(job)
        case .none: break
        }
    }

    /// Finishes a job whose body ended on this thread outside a queue's worker loop.
    static func finish(_ job: Job, _ outcome: JobOutcome) {
        var fx = JobEffects()
        lock.withLock {
            finishLocked(job, outcome, &fx, finalizeNow: true)
            finalizePendingLocked(&fx)
        }
        fx.perform()
    }

    /// Finalizes every job `finishLocked` queued, including the dependents that finishing them
    /// cancels in turn.
    static func finalizePendingLocked(_ fx: inout JobEffects) {
        while let job = fx.toFinalize.popLast() {
            finalizeLocked(job, &fx)
        }
    }

    /// Finalizes a finished job (``JobStateMachine/finalize()``): releases its dependents,
    /// leaves its queue and wakes its waiters.
    private static func finalizeLocked(_ job: Job, _ fx: inout JobEffects) {
        guard let finalization = job.machine.finalize() else { return }
        let outcome = finalization.outcome
        // A job that ran dropped its body on the running thread; one that never ran drops it
        // here, exactly once, since a job is finalized once.
        if finalization.releasesBody { fx.actions.append(.releaseBody(job)) }
        var watchers: [WeakJob]?
        if finalization.hasExtras {
            watchers = job.machine.takeWatchers()
            let waiters = job.machine.takeWaiters()
            if !waiters.isEmpty { fx.actions.append(contentsOf: waiters.map(JobEffects.Action.resume)) }
        }
        var (firstDependent, moreDependents) = job.machine.takeDependents()
        if let dependent = firstDependent.take() { dependencyFinishedLocked(dependent, job, outcome, &fx) }
        for dependent in moreDependents { dependencyFinishedLocked(dependent, job, outcome, &fx) }
        // A watcher that has been added to a queue since is among the dependents now.
        if let watchers {
            for entry in watchers {
                guard let watcher = entry.job, watcher.machine.isIdle else { continue }
                dependencyFinishedLocked(watcher, job, outcome, &fx)
            }
        }
        if let queue = finalization.queue {
            queue._withUnsafeGuaranteedRef { $0.removeMemberLocked(job, outcome, &fx) }
        }
    }

    /// `dependency` of `job` finished with `outcome`
    /// (``JobStateMachine/dependencyFinished(_:_:)``).
    ///
    /// Takes `job` over (the caller moves it out of the dependency's list): one that becomes
    /// ready goes into its queue's ready FIFO with the retain the list held, rather than the
    /// FIFO taking a retain of its own and the list's being released. Not inlined: inlined into
    /// the loop over the dependents, it retained and released each one.
    @inline(never)
    private static func dependencyFinishedLocked(
        _ dependent: consuming Job, _ dependency: Job, _ outcome: JobStateMachine.FinishedOutcome,
        _ fx: inout JobEffects
    ) {
        // Rebound as a constant: changing the job's state through the parameter itself (a
        // variable) counts, for the thread sanitizer, as writing the whole object, which races
        // with any thread reading its type to call a method.
        let job = consume dependent
        switch job.machine.dependencyFinished(dependency, outcome) {
        case .none: break
        case .finishCancelled(let reason): finishLocked(job, .cancelled(reason), &fx)
        case .makeReady: makeReadyLocked(consume job, emit: true, &fx)
        case .drainOutbox: fx.deliver.append(job)
        }
    }

    /// Makes `job` hear from its dependencies: its count of unfinished ones becomes exact, and
    /// each unfinished one lists it, strongly when `strongly` (the job is being added to a
    /// queue, which keeps it alive anyway) and weakly otherwise (the job is observed outside a
    /// queue). Dependencies that finished while the job was not linked apply the failure
    /// policy now, in the order they were added. A job being added that is cancelled already
    /// finishes at once, so it is listed nowhere.
    static func linkLocked(_ job: Job, strongly: Bool) {
        if !job.machine.linked {
            job.machine.linked = true
            var unfinished = 0
            job.machine.dependencies.forEach { dependency in
                if let outcome = dependency.machine.finalOutcome {
                    job.machine.applyFailurePolicy(dependency, outcome)
                } else {
                    unfinished += 1
                    if !strongly { dependency.machine.listDependent(job, strongly: false) }
                }
            }
            job.machine.unfinishedDependencies = Int32(unfinished)
        }
        guard strongly, job.machine.cancellation == nil, job.machine.unfinishedDependencies > 0 else { return }
        job.machine.dependencies.forEach { dependency in
            if !dependency.machine.finalized { dependency.machine.listDependent(job, strongly: true) }
        }
    }

    /// Puts a job of a queue whose dependencies have all finished into the queue's ready FIFO
    /// of its priority, and asks for a worker if one is free.
    static func makeReadyLocked(_ readyJob: consuming Job, emit: Bool, _ fx: inout JobEffects) {
        let job = consume readyJob  // a constant, as in `dependencyFinishedLocked`
        guard let queue = job.machine.queueReference else { return }
        // Moved into the closure through an optional: captured directly, it would be copied.
        var moving: Job? = consume job
        queue._withUnsafeGuaranteedRef { makeReadyLocked(moving.take()!, in: $0, emit: emit, &fx) }
    }

    /// ``makeReadyLocked(_:emit:_:)`` for a caller that has `job`'s queue at hand already.
    static func makeReadyLocked(_ readyJob: consuming Job, in queue: QueueCore, emit: Bool, _ fx: inout JobEffects) {
        let job = consume readyJob  // a constant, as in `dependencyFinishedLocked`
        let (level, observers) = job.machine.makeReady(emit: emit)
        if case .drainOutbox = observers { fx.deliver.append(copy job) }
        queue.machine.pushReady(consume job, level)
        queue.requestWorkersLocked(&fx)
    }

    /// Cancels `job` by request (``JobStateMachine/cancel()``): a job waiting in a queue
    /// finishes at once; a running one sees `isCancelled`; one outside a queue finishes as
    /// cancelled when it is added or started.
    static func cancelLocked(_ job: Job, _ fx: inout JobEffects) {
        switch job.machine.cancel() {
        case .none: break
        case .finish(let reason): finishLocked(job, .cancelled(reason), &fx)
        case .cancelBody: fx.actions.append(.cancelBody(job))
        }
    }

    // MARK: Delivering

    /// Hands `job`'s queued deliveries to its observers, in order, without the lock; runs the
    /// completion handler and releases the dependents when it reaches the finalize step. Only
    /// one thread drains a job's outbox at a time.
    static func drainOutbox(of job: Job, _ fx: inout JobEffects) {
        while true {
            let batch = lock.withLock { job.machine.takeOutbox() }
            if batch.isEmpty { return }
            for delivery in batch {
                switch delivery {
                case .state(let state, let observers):
                    for observer in observers { observer(state) }
                case .finalize:
                    let completion = lock.withLock { job.machine.takeCompletion() }
                    completion?(job)
                    lock.withLock {
                        finalizeLocked(job, &fx)
                        finalizePendingLocked(&fx)
                    }
                }
            }
        }
    }
}
