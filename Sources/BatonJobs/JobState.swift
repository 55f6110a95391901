/// Where a job is in its life: the observable state, the analogue of `Operation`'s
/// `isReady` / `isExecuting` / `isFinished` key paths.
///
/// A job moves forward only: ``pending`` (waiting for dependencies) → ``ready`` →
/// ``executing`` → ``finished(_:)``. Adding a dependency to a ready job that has not started
/// moves it back to ``pending``. A job that is cancelled before it starts goes straight to
/// ``finished(_:)`` with ``JobOutcome/cancelled(_:)``.
///
/// Thread safety: a value type; `Sendable`.
public enum JobState: Sendable, CustomStringConvertible {
    /// Some dependency has not finished yet.
    case pending
    /// Every dependency has finished; the job may start.
    case ready
    /// The job's body is running.
    case executing
    /// The job is done, and will never run (again).
    case finished(JobOutcome)

    /// Whether this is ``finished(_:)``.
    public var isFinished: Bool {
        if case .finished = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .pending: "pending"
        case .ready: "ready"
        case .executing: "executing"
        case .finished(let outcome): "finished(\(outcome))"
        }
    }
}

/// How a job finished.
///
/// Thread safety: a value type; `Sendable`.
public enum JobOutcome: Sendable, CustomStringConvertible {
    /// The body returned normally and the job was not cancelled.
    case succeeded
    /// The body threw this error.
    case failed(any Error)
    /// The job was cancelled, before or while it ran, for this reason.
    case cancelled(JobCancellationReason)

    /// Whether this is ``succeeded``.
    public var isSucceeded: Bool {
        if case .succeeded = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .succeeded: "succeeded"
        case .failed(let error): "failed(\(error))"
        case .cancelled(let reason): "cancelled(\(reason))"
        }
    }
}

/// Why a job was cancelled.
///
/// When a dependency fails or is cancelled and the dependent's policy is
/// ``DependencyFailurePolicy/cancel``, the dependent is cancelled with a reason that names the
/// job where the trouble started, however far upstream it was.
///
/// Thread safety: a value type; `Sendable`.
public enum JobCancellationReason: Sendable, CustomStringConvertible {
    /// ``Job/cancel()`` or ``JobQueue/cancelAll()`` was called, or an ``AsyncJob`` body threw
    /// `CancellationError`.
    case requested
    /// The named upstream job failed with this error.
    case dependencyFailed(job: String, error: any Error)
    /// The named upstream job was cancelled by request.
    case dependencyCancelled(job: String)

    public var description: String {
        switch self {
        case .requested: "requested"
        case .dependencyFailed(let job, let error): "dependency \(job) failed: \(error)"
        case .dependencyCancelled(let job): "dependency \(job) was cancelled"
        }
    }
}
