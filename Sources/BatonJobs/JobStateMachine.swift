import Dispatch

/// The scheduling state of one ``Job``: its phase, its edges, its observers and the effects
/// waiting to be delivered. Every field is guarded by ``JobGraph/lock``; the transitions below
/// run under it and only record what has to happen, and ``JobEffects`` does it after unlock.
struct JobStateMachine {
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
    /// Dependencies that have not finished; the job is ready at zero.
    var unfinishedDependencies = 0
    /// Strong references: a job keeps its dependencies (and their results) until it finishes.
    var dependencies: [Job] = []
    /// Weak references, dropped when this job finishes and has notified them. Weak because a
    /// dependent already keeps this job: two unfinished jobs joined by an edge would otherwise
    /// keep each other alive after their owner lets go of both. A dependent that matters is
    /// held elsewhere (by its queue, or by whoever will add or start it).
    var dependents: [WeakJob] = []
    var ownPriority: JobPriority
    /// The highest priority of a job waiting for this one (raised, never lowered).
    var inheritedPriority = JobPriority.veryLow
    var qualityOfService: JobQualityOfService?
    var failurePolicy = DependencyFailurePolicy.cancel
    var completion: (@Sendable (Job) -> Void)?

    /// The queue that owns the job, from `add` until the job is finalized.
    var queue: QueueCore?
    /// The job's index in its queue's member list, for O(1) removal.
    var memberIndex = -1

    var observers: [@Sendable (JobState) -> Void] = []
    var outbox: [Delivery] = []
    /// Whether some thread is draining `outbox`; only that thread delivers, so observers see
    /// transitions in order and never two at once.
    var delivering = false
    /// The job reached `.executing`: its runner releases its body, not the finalizer.
    var ran = false
    /// Completion ran and dependents were released: `waitUntilFinished` may return.
    var finalized = false
    var waiters: [JobWaiter] = []

    /// Marks of the cycle search and of the duplicate check in `JobQueue.add`, by pass number
    /// (see ``JobGraph/newMarkLocked()``).
    var forwardMark: UInt64 = 0
    var backwardMark: UInt64 = 0
    /// The job each search reached this one from; read only during the search that set it.
    unowned(unsafe) var forwardParent: Job?
    unowned(unsafe) var backwardParent: Job?

    init(priority: JobPriority) {
        ownPriority = priority
    }

    var effectivePriority: JobPriority { max(ownPriority, inheritedPriority) }

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

    /// The public view of `phase`.
    var state: JobState {
        switch phase {
        case .idle: unfinishedDependencies > 0 ? .pending : .ready
        case .waiting: .pending
        case .ready: .ready
        case .executing: .executing
        case .finished(let outcome): .finished(outcome)
        }
    }

    /// Records a state change for the observers. Returns true when the caller must become the
    /// deliverer (drain the outbox after unlocking).
    mutating func emit(_ state: JobState) -> Bool {
        guard !observers.isEmpty else { return false }
        outbox.append(.state(state, observers))
        return becomeDeliverer()
    }

    mutating func becomeDeliverer() -> Bool {
        if delivering { return false }
        delivering = true
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

/// A job, held weakly: an entry in a dependency's list of dependents.
struct WeakJob {
    weak var job: Job?
}
