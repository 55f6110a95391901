/// A wait that ran out of time: what was waited for, and for how long.
///
/// Thrown by the timed waits that throw — ``AsyncSemaphore/wait(timeout:isolation:)``,
/// ``AsyncLock/withLock(timeout:isolation:file:line:_:)``, ``withTimeout(_:isolation:operation:)``
/// and the other Baton waits given a deadline. A wait that times out takes nothing: no permit,
/// no lock, exactly as a cancelled one.
///
/// ```swift
/// do {
///     try await downloads.wait(timeout: .seconds(5))
/// } catch let error as TimeoutError {
///     logger.warning("\(error)")      // "AsyncSemaphore.wait timed out after 5.0 seconds"
/// }
/// ```
public struct TimeoutError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What timed out, for example `AsyncSemaphore.wait` or `withTimeout`.
    public let operation: String
    /// How long the caller asked to wait, when it gave a duration (or a deadline on a clock
    /// whose durations are `Duration`); `nil` for a deadline on a clock of another kind.
    public let timeout: Duration?

    /// Creates an error for `operation`, which waited `timeout`.
    public init(operation: String, timeout: Duration?) {
        self.operation = operation
        self.timeout = timeout
    }

    /// For example "AsyncSemaphore.wait timed out after 0.25 seconds".
    public var description: String {
        guard let timeout else { return "\(operation) timed out at its deadline" }
        return "\(operation) timed out after \(timeout)"
    }
}
