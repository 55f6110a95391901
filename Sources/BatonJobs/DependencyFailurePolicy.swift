/// What a job does when one of its dependencies failed or was cancelled.
///
/// Set per job with ``Job/dependencyFailurePolicy``; the default is ``cancel``.
///
/// ```swift
/// let cleanup = BlockJob { removeTemporaryFiles() }
/// cleanup.dependencyFailurePolicy = .run       // runs whatever happened upstream
/// try cleanup.addDependency(download)
/// ```
///
/// Thread safety: a value type; `Sendable`.
public enum DependencyFailurePolicy: Sendable, Equatable {
    /// Run anyway, as `Operation` does: the dependency only orders the work.
    case run
    /// Finish as cancelled without running, with the dependency's failure as the reason; the
    /// cancellation then reaches this job's own dependents in turn.
    case cancel
}
