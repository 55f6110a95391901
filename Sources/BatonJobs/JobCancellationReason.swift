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
