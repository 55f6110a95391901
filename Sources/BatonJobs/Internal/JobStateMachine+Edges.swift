import Dispatch

/// The transitions of a job's edges, priority and observers. As in
/// `JobStateMachine+Transitions.swift`, each changes this job's state only and returns what the
/// caller must do to the other end of an edge or to the job's queue.
extension JobStateMachine {
    // MARK: Adding and removing dependencies

    enum AddDependencyAction {
        /// The job has started: the caller throws.
        case refused(Refusal)
        /// The dependency finished already: kept only so that the job can read its result.
        case kept
        /// The dependency failed or was cancelled and the job, in a queue, is cancelled by its
        /// policy: finish it as cancelled.
        case finishCancelled(JobCancellationReason)
        /// The dependency is unfinished: the caller checks that the edge closes no cycle, then
        /// adds it with ``addUnfinishedDependency(_:)``.
        case checkCycle
    }

    /// Starts adding the edge "this job waits for `dependency`".
    mutating func addDependency(_ dependency: Job) -> AddDependencyAction {
        switch phase {
        case .executing: return .refused(.executing)
        case .finished: return .refused(.finished)
        case .idle, .waiting, .ready: break
        }
        guard let outcome = dependency.machine.finalOutcome else { return .checkCycle }
        // A job that is not linked applies the failure policy when it is.
        dependencies.append(dependency)
        if linked, applyFailurePolicy(dependency, outcome), queueReference != nil {
            return .finishCancelled(cancellation!)
        }
        return .kept
    }

    /// What the dependency must do with the job once an unfinished dependency is added.
    enum ListAction {
        /// The job is not linked: its dependencies do not know it yet.
        case none
        /// List the job in the dependency's ``JobStateMachine/dependents`` (`strongly`, the job
        /// is in a queue) or watchers (``listDependent(_:strongly:)``). When `leftReady`, the
        /// job went back to waiting and its queue counts one ready job less.
        case list(strongly: Bool, leftReady: Bool, observers: ObserverAction)
    }

    /// Adds `dependency`, unfinished, after the cycle check.
    mutating func addUnfinishedDependency(_ dependency: Job) -> ListAction {
        dependencies.append(dependency)
        guard linked else { return .none }
        unfinishedDependencies += 1
        var leftReady = false
        var observers = ObserverAction.none
        if unfinishedDependencies == 1 {
            if case .ready = phase, queueReference != nil {
                // Its FIFO entry is now stale and skipped.
                leftReady = true
                phase = .waiting
            }
            if emit(.pending) { observers = .drainOutbox }
        }
        return .list(strongly: queueReference != nil, leftReady: leftReady, observers: observers)
    }

    /// Lists `dependent`, which waits for this job: strongly when it is in a queue, weakly
    /// (a watcher) otherwise.
    mutating func listDependent(_ dependent: Job, strongly: Bool) {
        if strongly {
            dependents.append(dependent)
        } else {
            makeExtras().watchers.append(WeakJob(job: dependent))
        }
    }

    /// Takes `dependent` off the lists of ``listDependent(_:strongly:)``.
    mutating func unlistDependent(_ dependent: Job, strongly: Bool) {
        if strongly {
            dependents.removeAll { $0 === dependent }
        } else {
            extras?.watchers.removeAll { $0.job === dependent || $0.job == nil }
        }
    }

    enum RemoveDependencyAction {
        case none
        /// Take the job off the dependency's lists (``unlistDependent(_:strongly:)``), then
        /// do `then` (`.makeReady`, `.drainOutbox` or `.none`).
        case unlist(strongly: Bool, then: DependencyFinishedAction)
    }

    /// Removes every edge "this job waits for `dependency`". Nothing once the job started.
    mutating func removeDependency(_ dependency: Job) -> RemoveDependencyAction {
        guard !isStarted else { return .none }
        let before = dependencies.count
        dependencies.removeAll { $0 === dependency }
        let removed = before - dependencies.count
        guard removed > 0, !dependency.machine.finalized, linked else { return .none }
        unfinishedDependencies -= Int32(removed)
        var then = DependencyFinishedAction.none
        if unfinishedDependencies == 0 {
            switch phase {
            case .waiting: then = .makeReady
            case .idle: if emit(.ready) { then = .drainOutbox }
            case .ready, .executing, .finished: break
            }
        }
        return .unlist(strongly: queueReference != nil, then: then)
    }

    // MARK: Priority

    enum RaiseAction: Equatable {
        /// At or above that priority already, or started: the dependencies need nothing either.
        case unchanged
        /// Raised; raise its unfinished dependencies too.
        case raised
        /// Raised while ready: its queue's FIFO of this level takes it too (the entry at the
        /// old level goes stale and is skipped when popped). Raise its dependencies too.
        case requeue(JobPriority)
    }

    /// A job waiting for this one has `priority`: this one inherits it if higher.
    mutating func inherit(_ priority: JobPriority) -> RaiseAction {
        guard effectivePriority < priority, !isStarted else { return .unchanged }
        inheritedPriority = priority
        guard case .ready = phase, queueReference != nil else { return .raised }
        phase = .ready(priority)
        return .requeue(priority)
    }

    /// Sets the job's own priority.
    ///
    /// - Returns: The level whose ready FIFO must take the job (it is ready and rose), and the
    ///   effective priority its unfinished dependencies inherit.
    mutating func setOwnPriority(_ priority: JobPriority) -> (requeue: JobPriority?, effective: JobPriority) {
        ownPriority = priority
        let effective = effectivePriority
        if case .ready(let level) = phase, level < effective, queueReference != nil {
            phase = .ready(effective)
            return (effective, effective)
        }
        return (nil, effective)
    }

    // MARK: Observers and the completion handler

    /// Adds an observer; it hears the current state first.
    mutating func addObserver(_ handler: @escaping @Sendable (JobState) -> Void) -> ObserverAction {
        let current = state
        let extras = makeExtras()
        if !isFinished { extras.observers.append(handler) }
        extras.outbox.append(.state(current, [handler]))
        return becomeDeliverer() ? .drainOutbox : .none
    }

    /// Sets the completion handler; refused once the job has started.
    mutating func setCompletion(_ completion: (@Sendable (Job) -> Void)?) -> Refusal? {
        switch phase {
        case .executing: return .executing
        case .finished: return .finished
        case .idle, .waiting, .ready:
            makeExtras().completion = completion
            return nil
        }
    }

    /// Adds a thread or task, made by `makeWaiter`, to wake when the job is finalized. Returns
    /// it, or nil (and makes none) when the job is finalized already.
    mutating func addWaiter(_ makeWaiter: () -> JobWaiter) -> JobWaiter? {
        if finalized { return nil }
        let waiter = makeWaiter()
        makeExtras().waiters.append(waiter)
        return waiter
    }

    /// Takes out the waiter blocked on `semaphore`, added with ``addWaiter(_:)`` (a timed wait
    /// that gave up). Returns `false` when it is no longer here: the job has been finalized,
    /// which took its waiters out to wake them.
    mutating func removeWaiter(waitingOn semaphore: DispatchSemaphore) -> Bool {
        guard let extras else { return false }
        return extras.waiters.remove(waitingOn: semaphore)
    }

    /// How many threads and tasks wait for the job to be finalized (for tests).
    var waiterCount: Int { extras?.waiters.count ?? 0 }
}
