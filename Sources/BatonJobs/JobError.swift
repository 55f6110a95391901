/// A misuse of a job or queue, reported as an error at the call that made it instead of a hang
/// or a crash later.
///
/// Match on ``code``; new codes may be added, so a `switch` over them needs a `default`:
///
/// ```swift
/// do {
///     try upload.addDependency(compress)
/// } catch where error.code == .dependencyCycle {
///     log("not added: \(error.cycle!.joined(separator: " → "))")
/// }
/// ```
///
/// Two errors are equal when they have the same code and the same details (``job``, ``queue``,
/// ``cycle``, ``unfinishedDependencies``, ``reason``), so a test may compare with the static
/// members: `#expect(throws: JobError.selfDependency(job: "loner")) { … }`.
///
/// Jobs are named in the error by their ``Job/description``: the ``Job/name`` given at init, or
/// the type and address.
///
/// Thread safety: a value type; `Sendable`.
public struct JobError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong: one of the static members.
    ///
    /// Thread safety: a value type; `Sendable`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Hashable, Sendable {
            case selfDependency
            case dependencyCycle
            case alreadyAdded
            case alreadyFinished
            case alreadyExecuting
            case notReady
            case ownedByQueue
            case cancelled
            case notFinished
            case queueShutDown
        }

        private let value: Value

        private init(_ value: Value) {
            self.value = value
        }

        /// `job.addDependency(job)`.
        public static let selfDependency = Code(.selfDependency)
        /// The dependency would close a cycle; ``JobError/cycle`` names the jobs on it.
        public static let dependencyCycle = Code(.dependencyCycle)
        /// The job has been added to a queue already (this one or another).
        public static let alreadyAdded = Code(.alreadyAdded)
        /// The job has finished; it cannot be added, started or given dependencies.
        public static let alreadyFinished = Code(.alreadyFinished)
        /// The job is executing; it cannot be added, started again or given dependencies.
        public static let alreadyExecuting = Code(.alreadyExecuting)
        /// `start()` on a job some of whose dependencies have not finished.
        public static let notReady = Code(.notReady)
        /// `start()` on a job that a queue owns: the queue starts it.
        public static let ownedByQueue = Code(.ownedByQueue)
        /// The result of a job that was cancelled was read.
        public static let cancelled = Code(.cancelled)
        /// The result of a job that has not finished was read.
        public static let notFinished = Code(.notFinished)
        /// The job was added to a queue that has begun to shut down; ``JobError/queue`` names it.
        public static let queueShutDown = Code(.queueShutDown)

        /// The code's name, e.g. `dependencyCycle`.
        public var description: String { value.rawValue }
    }

    /// What went wrong.
    public let code: Code
    /// The job the failed call was made on. For ``Code/dependencyCycle`` it is the first job of
    /// ``cycle``: the one `addDependency` was called on.
    public let job: String
    /// The queue involved, for ``Code/alreadyAdded``, ``Code/ownedByQueue`` and
    /// ``Code/queueShutDown``; `nil` for other codes.
    public let queue: String?
    /// For ``Code/dependencyCycle``, the jobs on the cycle in waiting order: each waits for the
    /// next, and the last waits for the first. The first is the job `addDependency` was called
    /// on, the second the dependency passed in. `nil` for other codes.
    public let cycle: [String]?
    /// For ``Code/notReady``, how many of the job's dependencies have not finished; `nil` for
    /// other codes.
    public let unfinishedDependencies: Int?
    /// For ``Code/cancelled``, why the job was cancelled (a ``JobCancellationReason``'s
    /// description); `nil` for other codes.
    public let reason: String?
    /// For ``Code/cancelled`` when an upstream job failed (the reason
    /// ``JobCancellationReason/dependencyFailed(job:error:)``), that job's error; `nil` otherwise.
    ///
    /// It is not compared by `==` or hashed: ``reason`` already names it.
    public let underlyingError: (any Error)?

    private init(
        code: Code, job: String, queue: String? = nil, cycle: [String]? = nil, unfinishedDependencies: Int? = nil,
        reason: String? = nil, underlyingError: (any Error)? = nil
    ) {
        self.code = code
        self.job = job
        self.queue = queue
        self.cycle = cycle
        self.unfinishedDependencies = unfinishedDependencies
        self.reason = reason
        self.underlyingError = underlyingError
    }

    /// `job.addDependency(job)`: code ``Code/selfDependency``.
    public static func selfDependency(job: String) -> JobError {
        JobError(code: .selfDependency, job: job)
    }

    /// The dependency would close a cycle: code ``Code/dependencyCycle``.
    ///
    /// - Parameter cycle: The jobs on the cycle in waiting order (see ``cycle``).
    public static func dependencyCycle(cycle: [String]) -> JobError {
        JobError(code: .dependencyCycle, job: cycle.first ?? "", cycle: cycle)
    }

    /// The job has been added to `queue` already: code ``Code/alreadyAdded``.
    public static func alreadyAdded(job: String, queue: String) -> JobError {
        JobError(code: .alreadyAdded, job: job, queue: queue)
    }

    /// The job has finished: code ``Code/alreadyFinished``.
    public static func alreadyFinished(job: String) -> JobError {
        JobError(code: .alreadyFinished, job: job)
    }

    /// The job is executing: code ``Code/alreadyExecuting``.
    public static func alreadyExecuting(job: String) -> JobError {
        JobError(code: .alreadyExecuting, job: job)
    }

    /// `start()` on a job with unfinished dependencies: code ``Code/notReady``.
    public static func notReady(job: String, unfinishedDependencies: Int) -> JobError {
        JobError(code: .notReady, job: job, unfinishedDependencies: unfinishedDependencies)
    }

    /// `start()` on a job that `queue` owns: code ``Code/ownedByQueue``.
    public static func ownedByQueue(job: String, queue: String) -> JobError {
        JobError(code: .ownedByQueue, job: job, queue: queue)
    }

    /// The result of a cancelled job was read: code ``Code/cancelled``.
    ///
    /// - Parameters:
    ///   - job: The job's description.
    ///   - reason: Why the job was cancelled, e.g. `"requested"`.
    public static func cancelled(job: String, reason: String) -> JobError {
        JobError(code: .cancelled, job: job, reason: reason)
    }

    /// The result of a cancelled job was read; the error of a failed upstream job, if that was
    /// the reason, becomes ``underlyingError``.
    static func cancelled(job: String, reason: JobCancellationReason) -> JobError {
        var underlyingError: (any Error)?
        if case .dependencyFailed(_, let error) = reason { underlyingError = error }
        return JobError(code: .cancelled, job: job, reason: reason.description, underlyingError: underlyingError)
    }

    /// The result of a job that has not finished was read: code ``Code/notFinished``.
    public static func notFinished(job: String) -> JobError {
        JobError(code: .notFinished, job: job)
    }

    /// The job was added to `queue` after its shutdown began: code ``Code/queueShutDown``.
    public static func queueShutDown(job: String, queue: String) -> JobError {
        JobError(code: .queueShutDown, job: job, queue: queue)
    }

    /// Equal when the code and the details are equal; ``underlyingError`` is not compared.
    public static func == (lhs: JobError, rhs: JobError) -> Bool {
        lhs.code == rhs.code && lhs.job == rhs.job && lhs.queue == rhs.queue && lhs.cycle == rhs.cycle
            && lhs.unfinishedDependencies == rhs.unfinishedDependencies && lhs.reason == rhs.reason
    }

    /// Hashes the code and the details; ``underlyingError`` is left out, as in `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(job)
        hasher.combine(queue)
        hasher.combine(cycle)
        hasher.combine(unfinishedDependencies)
        hasher.combine(reason)
    }

    /// What happened and what to do about it.
    public var description: String {
        switch code {
        case .selfDependency:
            return "\(job) cannot depend on itself: it would wait for itself forever; remove the "
                + "addDependency call that passes the job to itself"
        case .dependencyCycle:
            return cycleDescription
        case .alreadyAdded:
            return "\(job) has already been added to queue \(queue ?? "?"); a job runs once, in one "
                + "queue: create a new job to run the work again"
        case .alreadyFinished:
            return "\(job) has already finished; it cannot be added, started or given dependencies "
                + "again: create a new job to run the work again"
        case .alreadyExecuting:
            return "\(job) is already executing; it cannot be added, started again or given "
                + "dependencies now: set it up before it starts, or create a new job"
        case .notReady:
            return "\(job) is not ready: \(unfinishedDependencies ?? 0) of its dependencies have not "
                + "finished; wait for them before calling start(), or add the job to a JobQueue, "
                + "which starts it when they have"
        case .ownedByQueue:
            return "\(job) belongs to queue \(queue ?? "?"), which starts it; start() is for jobs "
                + "outside a queue: let the queue run it, or do not add it to one"
        case .cancelled:
            return "\(job) was cancelled (\(reason ?? "?")) and has no result; check its outcome "
                + "before reading the result, or handle the cancellation"
        case .notFinished:
            return "\(job) has not finished, so it has no result yet; read it after "
                + "waitUntilFinished() or `await finished()`, or `try await value`"
        case .queueShutDown:
            return "\(job) was not added: queue \(queue ?? "?") is shutting down and takes no more jobs; "
                + "add jobs before shutDown(gracePeriod:) is called, or to a queue that is running"
        default:
            return "\(job): job error \(code)"
        }
    }

    /// The cycle and the edges whose removal breaks it.
    private var cycleDescription: String {
        let cycle = self.cycle ?? []
        guard cycle.count >= 2 else {
            return "adding this dependency to \(job) would close a cycle; it was not added"
        }
        let closed = (cycle + cycle.prefix(1)).joined(separator: " → ")
        return "adding this dependency would close the cycle \(closed) (each waits for the next), "
            + "so none of them could ever start; it was not added. Do not make \(cycle[0]) wait "
            + "for \(cycle[1]), or remove another edge of the cycle, such as \(cycle[1]) waiting "
            + "for \(cycle.count > 2 ? cycle[2] : cycle[0])"
    }
}
