/// Runs `operation`, and cancels it if it has not finished within `timeout`.
///
/// Structured: when `withTimeout` returns or throws, `operation` has ended. If the time runs out
/// first, `operation` is cancelled, `withTimeout` waits for it to end, and throws
/// ``TimeoutError`` (whatever `operation` returned or threw after its cancellation is dropped).
/// If `operation` finishes first, its timer is cancelled and its result returned, or its error
/// rethrown.
///
/// ```swift
/// let profile = try await withTimeout(.seconds(2)) {
///     try await api.profile(for: user)
/// }
/// ```
///
/// - Important: Cancellation is cooperative. An operation that does not check for it (a loop
///   that never calls `Task.checkCancellation()`, a blocking call, a `withCheckedContinuation`
///   without a cancellation handler) runs on after the time is up, and `withTimeout` throws
///   only once it ends: the timeout is then late by as long as the operation ignores it.
///   Every Baton wait, `Task.sleep` and `URLSession`'s async calls end when cancelled.
///
/// - Parameters:
///   - timeout: How long `operation` may run.
///   - isolation: The caller's actor, on which `operation` runs; leave the default.
///   - operation: The work to bound. It runs in a child task, on the caller's actor if it has one.
/// - Returns: What `operation` returns.
/// - Throws: ``TimeoutError`` if `timeout` passed before `operation` finished; otherwise what
///   `operation` throws (`CancellationError`, typically, if the calling task is cancelled).
public func withTimeout<Result>(
    _ timeout: Duration,
    isolation: isolated (any Actor)? = #isolation,
    operation: () async throws -> sending Result
) async throws -> sending Result {
    try await withTimeout(WaitDeadline(timeout: timeout), isolation: isolation, operation: operation)
}

/// Runs `operation`, and cancels it if it has not finished by `deadline` on `clock`.
///
/// As ``withTimeout(_:isolation:operation:)``, with a deadline on a clock of the caller's choice
/// (a manual clock in tests).
///
/// - Parameters:
///   - deadline: When to cancel `operation`.
///   - clock: The clock `deadline` is on.
///   - isolation: The caller's actor, on which `operation` runs; leave the default.
///   - operation: The work to bound.
/// - Returns: What `operation` returns.
/// - Throws: ``TimeoutError`` if `deadline` came before `operation` finished; otherwise what
///   `operation` throws.
public func withTimeout<C: Clock, Result>(
    until deadline: C.Instant, clock: C,
    isolation: isolated (any Actor)? = #isolation,
    operation: () async throws -> sending Result
) async throws -> sending Result {
    try await withTimeout(
        WaitDeadline(deadline, clock: clock, timeout: nil), isolation: isolation, operation: operation)
}

/// How each child of ``withTimeout(_:isolation:operation:)`` ended.
private enum TimeoutRace: Sendable {
    /// The operation ended; with its error, if it threw.
    case operation((any Error)?)
    /// The timer ran to the deadline.
    case deadline
    /// The timer was cancelled: the operation ended first, or the calling task is cancelled.
    case timerCancelled
}

/// The operation's result, handed from its child task to the caller once the child has ended
/// (the task group's completion orders the write before the read).
private final class TimeoutResult<Result>: @unchecked Sendable {
    var value: Result?
}

private func withTimeout<Result>(
    _ deadline: WaitDeadline,
    isolation: isolated (any Actor)?,
    operation: () async throws -> sending Result
) async throws -> sending Result {
    try await withoutActuallyEscaping(operation) { operation in
        // Called only in the child task below, which ends before this function returns, and
        // on the caller's actor (through `runIsolated`): never concurrently with the caller.
        nonisolated(unsafe) let operation = operation
        let result = TimeoutResult<Result>()
        return try await withThrowingTaskGroup(of: TimeoutRace.self, returning: Result.self, isolation: isolation) {
            group in
            group.addTask {
                do {
                    result.value = try await runIsolated(on: isolation, operation)
                    return .operation(nil)
                } catch {
                    return .operation(error)
                }
            }
            group.addTask {
                do {
                    try await deadline.sleepUntilDeadline()
                    return .deadline
                } catch {
                    return .timerCancelled
                }
            }
            var timedOut = false
            while let race = try await group.next() {
                switch race {
                case .operation(let error):
                    group.cancelAll()
                    if timedOut { throw TimeoutError(operation: "withTimeout", timeout: deadline.timeout) }
                    if let error { throw error }
                    return result.value!
                case .deadline:
                    timedOut = true
                    group.cancelAll()
                case .timerCancelled:
                    break
                }
            }
            preconditionFailure("withTimeout: the operation's child task ended without reporting")
        }
    }
}

/// Runs `operation` on `actor` (or off any actor, for `nil`): how a child task runs the caller's
/// closure where the caller would.
private func runIsolated<Result>(
    on actor: isolated (any Actor)?, _ operation: () async throws -> sending Result
) async throws -> sending Result {
    try await operation()
}
