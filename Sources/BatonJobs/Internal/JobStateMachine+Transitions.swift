/// The transitions of a job's life. Each changes this job's state only and returns what the
/// caller, holding ``JobGraph/lock``, must do next: ``JobGraph`` carries the actions to the
/// job's dependents, dependencies and queue, ``JobEffects`` does the rest after unlock.
extension JobStateMachine {
    /// Whether the job's observers have something new: the caller then drains its outbox after
    /// unlock (it became the job's deliverer).
    enum ObserverAction {
        case none
        case drainOutbox
    }

    /// Why a job cannot take a new dependency, or be started or added: it has started.
    enum Refusal {
        case executing
        case finished
    }

    // MARK: Entering a queue, starting

    /// What the job does once added to a queue and linked to its dependencies.
    enum EnqueueAction {
        /// Cancelled before it was added (or by a dependency that failed): finish it as cancelled.
        case finishCancelled(JobCancellationReason)
        /// No unfinished dependency: into the queue's ready jobs (``makeReady(emit:)``).
        case makeReady
        /// Waits for its dependencies.
        case wait
    }

    /// The job, which has no dependencies and which no other thread can see yet, goes onto
    /// `queue`'s inbox (``QueueCore/submit(_:)``, without the lock): ready at once, linked (it has
    /// nothing to link), and not yet one of the queue's members.
    @inline(__always)
    mutating func enterInbox(of queue: Unmanaged<QueueCore>) {
        queueReference = queue
        linked = true
        phase = .ready(effectivePriority)
        inInbox = true
    }

    /// The inbox was closed before the job could be pushed: nobody saw it, and it is as it was
    /// before ``enterInbox(of:)``.
    @inline(__always)
    mutating func leaveInboxUnpushed() {
        queueReference = nil
        linked = false
        phase = .idle
        inInbox = false
    }

    /// The queue took the job in from its inbox, under the lock: it is a member now.
    @inline(__always)
    mutating func leaveInbox() {
        inInbox = false
    }

    /// The job joined a queue and was linked (``JobGraph/linkLocked(_:strongly:)``).
    @inline(__always)
    mutating func enqueued() -> EnqueueAction {
        if let reason = cancellation {
            phase = .waiting
            return .finishCancelled(reason)
        }
        if unfinishedDependencies == 0 { return .makeReady }
        phase = .waiting
        return .wait
    }

    /// All dependencies done, in a queue: ready at the job's effective priority.
    ///
    /// - Parameter emit: Whether observers hear `.ready` (not for a job that was never pending).
    /// - Returns: The level of the ready FIFO that takes the job, and whether to drain its outbox.
    @inline(__always)
    mutating func makeReady(emit: Bool) -> (level: JobPriority, observers: ObserverAction) {
        let level = effectivePriority
        phase = .ready(level)
        return (level, emit && self.emit(.ready) ? .drainOutbox : .none)
    }

    /// A worker took the job from its queue, or ``Job/start()`` runs it: its body runs next.
    @inline(__always)
    mutating func startExecuting() -> ObserverAction {
        phase = .executing
        ran = true
        return emit(.executing) ? .drainOutbox : .none
    }

    /// What ``Job/start()`` does with a job that is not in a queue and has no unfinished
    /// dependency, once linked.
    enum StartAction {
        case finishCancelled(JobCancellationReason)
        case run(ObserverAction)
    }

    mutating func startOutsideQueue() -> StartAction {
        if let reason = cancellation { return .finishCancelled(reason) }
        return .run(startExecuting())
    }

    // MARK: Finishing

    /// What follows the job's move to finished.
    enum FinishAction {
        /// Nothing to hand to anyone first: finalize it now (``finalize()``).
        case finalize
        /// Observers or a completion handler first: this thread drains the outbox, whose last
        /// step finalizes the job.
        case drainOutbox
        /// Another thread is draining the outbox: it finalizes the job.
        case none
    }

    /// The job's body ended with `bodyOutcome` (or the job never ran: it was cancelled). A
    /// cancellation the job had replaces a success or a plain cancellation, so that the
    /// outcome names its cause.
    ///
    /// - Returns: What to do next, and whether the job left its queue's ready jobs (their count
    ///   must drop).
    @inline(__always)
    mutating func finish(_ bodyOutcome: JobOutcome) -> (action: FinishAction, leftReady: Bool) {
        var outcome = bodyOutcome
        if let reason = cancellation {
            switch outcome {
            case .succeeded, .cancelled(.requested): outcome = .cancelled(reason)
            case .failed, .cancelled: break
            }
        }
        var leftReady = false
        if case .ready = phase { leftReady = queueReference != nil }
        phase = .finished(FinishedOutcome(outcome))
        if Self.finishesQuietly(extras) { return (.finalize, leftReady) }
        let extras = makeExtras()
        if !extras.observers.isEmpty {
            extras.outbox.append(.state(.finished(outcome), extras.observers))
            extras.observers = []
        }
        extras.outbox.append(.finalize)
        return (becomeDeliverer() ? .drainOutbox : .none, leftReady)
    }

    /// What finalizing a job hands on. The lists it hands on are taken apart, after it:
    /// the dependents (``takeDependents()``) always, the waiters (``takeWaiters()``) and
    /// watchers (``takeWatchers()``) when the job has extras. An action holding them would be
    /// copied and destroyed as a whole, retaining each job and array in it, on every job's path.
    struct Finalization {
        /// In one word, as dependents are told it (``dependencyFinished(_:_:)``).
        let outcome: FinishedOutcome
        /// The job never ran: its body is released now, exactly once.
        let releasesBody: Bool
        /// The job may have waiters to wake and watchers to tell.
        let hasExtras: Bool
        /// The queue the job leaves.
        let queue: Unmanaged<QueueCore>?
    }

    /// Finished, and its observers and completion handler have run: dependents may start. Drops
    /// the job's edges and its queue. Nil when the job is not finished or already finalized.
    ///
    /// Always inlined, as the other transitions on the path of every job: a call returns the
    /// action through memory, with a copy and a destroy of it.
    @inline(__always)
    mutating func finalize() -> Finalization? {
        guard case .finished(let finished) = phase, !finalized else { return nil }
        finalized = true
        dependencies = JobList()
        let queue = queueReference
        queueReference = nil
        return Finalization(outcome: finished, releasesBody: !ran, hasExtras: extras != nil, queue: queue)
    }

    /// The jobs in a queue that waited for this one, taken out of a job being finalized to be
    /// told (``dependencyFinished(_:_:)``): the first, and the rest. Moved out, not copied: a
    /// copy would retain and release every dependent.
    @inline(__always)
    mutating func takeDependents() -> (first: Job?, rest: [Job]) {
        dependents.takeAll()
    }

    /// The threads and tasks waiting for the job, taken out to wake once it is finalized.
    mutating func takeWaiters() -> [JobWaiter] {
        guard let extras else { return [] }
        var taken: [JobWaiter] = []
        swap(&taken, &extras.waiters)
        return taken
    }

    /// The observed jobs outside a queue that wait for this one, taken out to tell once it is
    /// finalized.
    mutating func takeWatchers() -> [WeakJob] {
        guard let extras else { return [] }
        var taken: [WeakJob] = []
        swap(&taken, &extras.watchers)
        return taken
    }

    /// The observers' deliveries queued so far, in order; none when the outbox is empty, and
    /// then the caller is no longer the deliverer.
    mutating func takeOutbox() -> [Delivery] {
        let extras = makeExtras()
        if extras.outbox.isEmpty {
            extras.delivering = false
            return []
        }
        var taken: [Delivery] = []
        swap(&taken, &extras.outbox)
        return taken
    }

    /// The completion handler, taken out to run once.
    mutating func takeCompletion() -> (@Sendable (Job) -> Void)? {
        let completion = extras?.completion
        extras?.completion = nil
        return completion
    }

    // MARK: Dependencies finishing

    /// What a dependency finishing means for this job.
    enum DependencyFinishedAction {
        case none
        /// Cancelled (by the failure policy, or before): finish it as cancelled.
        case finishCancelled(JobCancellationReason)
        /// Its last dependency, in a queue: into the ready jobs (``makeReady(emit:)``).
        case makeReady
        /// Outside a queue, its observers hear `.ready`: drain its outbox.
        case drainOutbox
    }

    /// `dependency` finished with `outcome` and was finalized.
    @inline(__always)
    mutating func dependencyFinished(_ dependency: Job, _ outcome: FinishedOutcome) -> DependencyFinishedAction {
        guard !isFinished else { return .none }  // cancelled before its dependencies finished
        unfinishedDependencies -= 1
        if case .other(let box) = outcome { applyFailurePolicy(dependency, box.outcome) }
        switch phase {
        case .waiting, .ready:
            if let reason = cancellation {
                return .finishCancelled(reason)
            } else if unfinishedDependencies == 0 {
                return .makeReady
            }
        case .idle:
            if unfinishedDependencies == 0, emit(.ready) { return .drainOutbox }
        case .executing, .finished:
            break
        }
        return .none
    }

    /// Cancels the job if its policy is `.cancel` and `dependency` failed or was cancelled,
    /// unless it is cancelled already. Returns whether it did.
    @discardableResult
    mutating func applyFailurePolicy(_ dependency: Job, _ outcome: JobOutcome) -> Bool {
        guard cancellation == nil, failurePolicy == .cancel,
            let reason = Self.cancellationReason(dependency, outcome)
        else { return false }
        cancellation = reason
        return true
    }

    /// The reason a dependent with policy `.cancel` is cancelled when `dependency` finished
    /// with `outcome`; nil when it succeeded. The root cause is passed on unchanged.
    static func cancellationReason(_ dependency: Job, _ outcome: JobOutcome) -> JobCancellationReason? {
        switch outcome {
        case .succeeded: nil
        case .failed(let error): .dependencyFailed(job: dependency.description, error: error)
        case .cancelled(.requested): .dependencyCancelled(job: dependency.description)
        case .cancelled(let upstream): upstream
        }
    }

    // MARK: Cancelling

    enum CancelAction {
        /// Finished already, or outside a queue: it finishes as cancelled when added or started.
        case none
        /// Not started, in a queue: finish it as cancelled now.
        case finish(JobCancellationReason)
        /// Running: tell its body (an `AsyncJob`'s task).
        case cancelBody
    }

    /// Cancels the job by request. A failed dependency's reason comes first, even when the job
    /// has not applied it yet.
    mutating func cancel() -> CancelAction {
        if isFinished { return .none }
        if cancellation == nil { cancellation = effectiveCancellation ?? .requested }
        switch phase {
        case .waiting, .ready: return .finish(cancellation!)
        case .executing: return .cancelBody
        case .idle, .finished: return .none
        }
    }
}
