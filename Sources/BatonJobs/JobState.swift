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
