/// Why a future failed when the failure is the future machinery's own.
///
/// Cancellation is reported with Swift's `CancellationError`, as async code expects.
public enum FutureError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The future did not complete within the given time (``Future/timeout(after:)``).
    case timedOut(after: Duration)
    /// ``Future/race(_:)`` or ``Future/any(_:)`` was given no futures.
    case noFutures

    public var description: String {
        switch self {
        case .timedOut(let duration): "the future did not complete within \(duration)"
        case .noFutures: "race/any needs at least one future"
        }
    }
}
