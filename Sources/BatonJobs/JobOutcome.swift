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
