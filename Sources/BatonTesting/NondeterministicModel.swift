/// A sequential specification whose operations may lead to one of several states: for example
/// a cache that may or may not have evicted an entry, when the output does not say which.
///
/// ``LinearizabilityChecker`` tracks the set of states the object may be in after each prefix
/// of a candidate order, and rejects the order only when that set becomes empty.
///
/// ```swift
/// struct LossyRegister: NondeterministicModel {
///     enum Operation { case write(Int), read }
///     var initialState: Int? { nil }
///     /// A write may be lost: afterwards the register holds the value or what it held before.
///     func successors(of state: Int?, _ input: Operation, _ output: Int?) -> Set<Int?> {
///         switch input {
///         case .write(let value): [value, state]
///         case .read: output == state ? [state] : []
///         }
///     }
/// }
/// ```
///
/// Thread safety: the checker calls a model from one thread; models are usually plain values.
public protocol NondeterministicModel {
    /// The object's abstract state. Keep it small: the checker stores every set of states it
    /// reaches.
    associatedtype State: Hashable
    /// An operation with its arguments.
    associatedtype Input
    /// What an operation returns.
    associatedtype Output

    /// The state before any operation.
    var initialState: State { get }

    /// Every state the object may be in after `input` ran in `state` and returned `output`;
    /// empty if that output is impossible there.
    func successors(of state: State, _ input: Input, _ output: Output) -> Set<State>

    /// A short text for an operation and its output in a verdict, such as `read → 3`.
    func describe(_ input: Input, _ output: Output) -> String

    /// A short text for a state in a verdict.
    func describe(_ state: State) -> String
}

extension NondeterministicModel {
    /// `input → output`, each as `String(describing:)` writes it.
    public func describe(_ input: Input, _ output: Output) -> String {
        "\(input) → \(output)"
    }

    /// The state as `String(describing:)` writes it.
    public func describe(_ state: State) -> String {
        String(describing: state)
    }
}
