/// Why a future failed when the failure is the future machinery's own.
///
/// Match on ``code``; new codes may be added, so a `switch` over them needs a `default`:
///
/// ```swift
/// do {
///     let profile = try await loadProfile().timeout(after: .seconds(5)).value
/// } catch let error as FutureError where error.code == .timedOut {
///     showRetryButton()
/// }
/// ```
///
/// Two errors are equal when they have the same code and the same details, so a test may
/// compare with the static members: `error as? FutureError == .timedOut(after: .seconds(5))`.
///
/// Cancellation is reported with Swift's `CancellationError`, as async code expects.
///
/// Thread safety: a value type; `Sendable`.
public struct FutureError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong: one of the static members.
    ///
    /// Thread safety: a value type; `Sendable`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Hashable, Sendable {
            case timedOut
            case noFutures
            case adoptionCycle
        }

        private let value: Value

        private init(_ value: Value) {
            self.value = value
        }

        /// The future did not complete within the time allowed (``Future/timeout(after:)``,
        /// ``Future/wait(timeout:)``).
        public static let timedOut = Code(.timedOut)
        /// ``Future/race(_:)`` or ``Future/any(_:)`` was given no futures.
        public static let noFutures = Code(.noFutures)
        /// A promise was completed with a future that waits for the promise's own future
        /// (``Promise/complete(with:)``).
        public static let adoptionCycle = Code(.adoptionCycle)

        /// The code's name, e.g. `timedOut`.
        public var description: String { value.rawValue }
    }

    /// What went wrong.
    public let code: Code
    /// The time that passed without completion, for ``Code/timedOut``; `nil` for other codes.
    public let duration: Duration?

    private init(code: Code, duration: Duration? = nil) {
        self.code = code
        self.duration = duration
    }

    /// The future did not complete within `duration` (``Future/timeout(after:)``,
    /// ``Future/wait(timeout:)``).
    ///
    /// - Parameter duration: The time allowed.
    /// - Returns: An error with code ``Code/timedOut`` and ``duration`` set.
    public static func timedOut(after duration: Duration) -> FutureError {
        FutureError(code: .timedOut, duration: duration)
    }

    /// ``Future/race(_:)`` or ``Future/any(_:)`` was given no futures: code ``Code/noFutures``.
    public static let noFutures = FutureError(code: .noFutures)

    /// A promise was completed with its own future, or with a future that waits for it through
    /// other adoptions: code ``Code/adoptionCycle``. Every future on the cycle fails with it.
    public static let adoptionCycle = FutureError(code: .adoptionCycle)

    /// What happened and what to do about it.
    public var description: String {
        switch code {
        case .timedOut:
            let limit = duration.map { "within \($0)" } ?? "in time"
            return "the future did not complete \(limit); allow more time if the work needs it, "
                + "or find what keeps the work from completing"
        case .noFutures:
            return "race/any was given no futures, and needs at least one to take an outcome from; "
                + "check that the array is not empty before the call"
        case .adoptionCycle:
            return "a promise was completed with its own future, or with a future that waits for it "
                + "through other adopted futures, so none of them could ever complete; every future on "
                + "the cycle fails with this error. Complete the promise with a value, an error, or a "
                + "future that does not depend on it"
        default:
            return "future error \(code)"
        }
    }
}
