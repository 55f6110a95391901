/// The sequential specification of a concurrent object: what each operation may return, one at
/// a time, from each state. ``LinearizabilityChecker`` asks whether a concurrent history can be
/// explained by some order of its operations that this model accepts.
///
/// ```swift
/// struct RegisterModel: SequentialModel {
///     enum Operation { case write(Int), read }
///     var initialState: Int { 0 }
///     func step(_ state: Int, _ input: Operation, _ output: Int?) -> Int? {
///         switch input {
///         case .write(let value): value
///         case .read: output == state ? state : nil
///         }
///     }
/// }
/// ```
///
/// A model whose next state is not determined by the state, the operation and its output
/// adopts ``NondeterministicModel`` instead.
///
/// Thread safety: the checker calls a model from one thread; models are usually plain values.
public protocol SequentialModel {
    /// The object's abstract state. Keep it small: the checker stores every state it reaches.
    associatedtype State: Hashable
    /// An operation with its arguments.
    associatedtype Input
    /// What an operation returns.
    associatedtype Output

    /// The state before any operation.
    var initialState: State { get }

    /// The state after `input` ran in `state` and returned `output`, or `nil` if that output is
    /// impossible there.
    func step(_ state: State, _ input: Input, _ output: Output) -> State?

    /// A short text for an operation and its output in a verdict, such as `increment → 3`.
    func describe(_ input: Input, _ output: Output) -> String

    /// A short text for a state in a verdict.
    func describe(_ state: State) -> String
}

extension SequentialModel {
    /// `input → output`, each as `String(describing:)` writes it.
    public func describe(_ input: Input, _ output: Output) -> String {
        "\(input) → \(output)"
    }

    /// The state as `String(describing:)` writes it.
    public func describe(_ state: State) -> String {
        String(describing: state)
    }
}
