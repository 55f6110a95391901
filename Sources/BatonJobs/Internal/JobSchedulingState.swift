import Dispatch

/// The scheduling state of one ``Job``: its phase, its edges, its observers and the effects
/// waiting to be delivered. Every field is guarded by ``JobGraph/lock``; the transitions below
/// run under it and only record what has to happen, and ``JobEffects`` does it after unlock.
struct JobSchedulingState {
    /// Where the job is, as the scheduler sees it.
    enum Phase {
        /// Not in a queue, not started.
        case idle
        /// In a queue, waiting for dependencies.
        case waiting
        /// In a queue's ready FIFO of this priority level.
        case ready(JobPriority)
        /// The body is running.
        case executing
        /// Done: set exactly once, under the lock.
        case finished(JobOutcome)
    }

    /// Something to hand to the job's observers or do after it finished, in order.
    enum Delivery {
        case state(JobState, [@Sendable (JobState) -> Void])
        /// Run the completion handler, then release the dependents.
        case finalize
    }

    var phase = Phase.idle
    /// Non-nil once the job is cancelled, by request or through a dependency.
    var cancellation: JobCancellationReason?
    /// Dependencies that have not finished; the job is ready at zero. Exact only while the job
    /// is `linked`; read ``unfinishedCount`` instead.
    var unfinishedDependencies = 0
    /// Strong references: a job keeps its dependencies (and their results) until it finishes.
    var dependencies = JobList()
    /// The jobs in a queue that wait for this one, held strongly until this job finishes. A
    /// queued job is alive anyway (its queue holds it), and strong links keep the side tables
    /// that weak references need off the hot path. A job outside any queue is not listed: two
    /// such jobs joined by an edge would otherwise keep each other alive after their owner lets
    /// go of both.
    var dependents = JobList()
    /// Whether the job's unfinished dependencies list it (in `dependents` or
    /// ``Extras/watchers``) and
    /// `unfinishedDependencies` is exact. A job becomes linked when it is added to a queue,
    /// started, or observed; until then its dependencies do not know it, and its state is
    /// counted from them when asked.
    var linked = false
    /// Whether some job has ever depended on this one. While false, no edge from this job can
    /// close a cycle, and the cycle check is skipped.
    var hasDependents = false
    var ownPriority: JobPriority
    /// The highest priority of a job waiting for this one (raised, never lowered).
    var inheritedPriority = JobPriority.veryLow
    var qualityOfService: JobQualityOfService?
    var failurePolicy = DependencyFailurePolicy.cancel

    /// The queue that owns the job, from `add` until the job is finalized. Not retained: a
    /// queue with members keeps itself alive (see ``QueueCore/enqueueLocked(_:_:)``), and
    /// retaining it for every job would make the thread adding jobs and the workers finishing
    /// them contend on its reference count. The scheduling paths borrow it with
    /// `_withUnsafeGuaranteedRef`: a strong copy (what `if let` on an `unowned(unsafe)`
    /// reference makes) is that same retain and release, twice per job.
    var queueReference: Unmanaged<QueueCore>?

    /// The owning queue as a strong reference, for the paths off the hot one (error messages).
    var queue: QueueCore? { queueReference?.takeUnretainedValue() }
    /// The neighbours in the queue's member list (see ``QueueSchedulingState/join(_:)``); the
    /// list holds its own retain of each member, so these do not.
    var previousMember: Unmanaged<Job>?
    var nextMember: Unmanaged<Job>?

    /// The job is in its queue's inbox (see ``QueueCore``): ready, but not yet among the queue's
    /// members and ready FIFOs. Set by the thread that adds it before anyone else can see it;
    /// cleared under the lock when the queue takes it in.
    var inInbox = false
    /// The job below this one on its queue's inbox stack.
    var inboxNext: Unmanaged<Job>?

    /// The job reached `.executing`: its runner releases its body, not the finalizer.
    var ran = false
    /// Completion ran and dependents were released: `waitUntilFinished` may return.
    var finalized = false
    /// Observers, waiters, a completion handler, watchers: nil until the job has one of them.
    var extras: Extras?

    /// The mark of the cycle search and of the duplicate check in `JobQueue.add`, by pass
    /// number (see ``JobGraph/newMarkLocked()``).
    var forwardMark: UInt64 = 0
    /// The job the cycle search reached this one from; read only during the search that set it.
    unowned(unsafe) var forwardParent: Job?

    init(priority: JobPriority) {
        ownPriority = priority
    }

    /// What most jobs never have, out of line: a plain job is smaller, and cheaper to make and
    /// to free. Guarded by ``JobGraph/lock``, like the rest of the state.
    final class Extras {
        var observers: [@Sendable (JobState) -> Void] = []
        var outbox: [Delivery] = []
        /// Whether some thread is draining `outbox`; only that thread delivers, so observers see
        /// transitions in order and never two at once.
        var delivering = false
        var completion: (@Sendable (Job) -> Void)?
        var waiters: [JobWaiter] = []
        /// Observed jobs outside any queue that wait for this one, held weakly, so that their
        /// observers hear `.ready` when the last dependency finishes. Rare: a job only gets
        /// here when something observes it before it is added to a queue.
        var watchers: [WeakJob] = []
    }

    /// The extras, made on first use.
    mutating func makeExtras() -> Extras {
        if let extras { return extras }
        let made = Extras()
        extras = made
        return made
    }

    /// Whether finishing has nothing to hand to anyone first (no observer, no completion
    /// handler, no delivery under way), so the job can be finalized under the same lock hold.
    var finishesQuietly: Bool {
        guard let extras else { return true }
        return extras.observers.isEmpty && extras.completion == nil && !extras.delivering
    }

    var effectivePriority: JobPriority { max(ownPriority, inheritedPriority) }

    var isIdle: Bool {
        if case .idle = phase { return true }
        return false
    }

    var isFinished: Bool {
        if case .finished = phase { return true }
        return false
    }

    var isStarted: Bool {
        switch phase {
        case .executing, .finished: true
        case .idle, .waiting, .ready: false
        }
    }

    /// How the job finished, once it is finalized: its observers and completion handler have
    /// run and its dependents have been told. A dependent counts a dependency as done only from
    /// then on (not from `.finished`), so that it never starts before that completion handler
    /// has returned, and so that it is told exactly once.
    var finalOutcome: JobOutcome? {
        guard finalized, case .finished(let outcome) = phase else { return nil }
        return outcome
    }

    /// Dependencies that are not done: kept while the job is linked, counted otherwise.
    var unfinishedCount: Int {
        linked ? unfinishedDependencies : dependencies.count { !$0.machine.finalized }
    }

    /// The reason the job is cancelled, if it is; for a job that is not linked yet, including
    /// the reason a dependency that failed or was cancelled will give it when it is linked.
    var effectiveCancellation: JobCancellationReason? {
        if let cancellation { return cancellation }
        guard !linked, failurePolicy == .cancel else { return nil }
        for index in 0..<dependencies.count {
            let dependency = dependencies[index]
            if let outcome = dependency.machine.finalOutcome,
                let reason = JobGraph.cancellationReason(dependency, outcome)
            {
                return reason
            }
        }
        return nil
    }

    /// The public view of `phase`.
    var state: JobState {
        switch phase {
        case .idle: unfinishedCount > 0 ? .pending : .ready
        case .waiting: .pending
        case .ready: .ready
        case .executing: .executing
        case .finished(let outcome): .finished(outcome)
        }
    }

    /// Records a state change for the observers. Returns true when the caller must become the
    /// deliverer (drain the outbox after unlocking).
    mutating func emit(_ state: JobState) -> Bool {
        guard let extras, !extras.observers.isEmpty else { return false }
        extras.outbox.append(.state(state, extras.observers))
        return becomeDeliverer()
    }

    mutating func becomeDeliverer() -> Bool {
        let extras = makeExtras()
        if extras.delivering { return false }
        extras.delivering = true
        return true
    }
}

/// A thread or task waiting for a job or a queue to finish.
enum JobWaiter {
    case semaphore(DispatchSemaphore)
    case continuation(CheckedContinuation<Void, Never>)

    func resume() {
        switch self {
        case .semaphore(let semaphore): semaphore.signal()
        case .continuation(let continuation): continuation.resume()
        }
    }
}

/// A job, held weakly: an entry in a dependency's list of watchers.
struct WeakJob {
    weak var job: Job?
}
