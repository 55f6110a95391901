import BatonTesting

/// The sequential specification of a shared counter: `increment` adds one and returns the new
/// value, `read` returns the value.
///
/// ```swift
/// let checker = LinearizabilityChecker(model: CounterModel(initialValue: 40))
/// ```
///
/// Thread safety: a plain value; `Sendable`.
public struct CounterModel: SequentialModel, Sendable {
    /// A counter operation.
    public enum Operation: Sendable, Hashable, CustomStringConvertible {
        /// Adds one; returns the new value.
        case increment
        /// Returns the value.
        case read

        public var description: String {
            switch self {
            case .increment: "increment"
            case .read: "read"
            }
        }
    }

    /// The value before the history's first operation.
    public var initialValue: Int

    /// Creates the model of a counter that starts at `initialValue`.
    public init(initialValue: Int = 0) {
        self.initialValue = initialValue
    }

    public var initialState: Int { initialValue }

    public func step(_ state: Int, _ input: Operation, _ output: Int) -> Int? {
        switch input {
        case .increment: output == state + 1 ? output : nil
        case .read: output == state ? state : nil
        }
    }
}
