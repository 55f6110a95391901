/// One completed operation in a concurrent history: what was asked, what came back, and when.
///
/// `invocation` and `response` are ticks of one ``LogicalClock`` shared by every thread of the
/// history, taken just before the operation started and just after it returned. An operation
/// whose `response` is earlier than another's `invocation` happened before it in real time, and
/// a linearization must keep that order; operations whose intervals overlap may take effect in
/// either order. Equal ticks count as overlapping.
///
/// ```swift
/// let entry = HistoryEntry(input: CounterModel.Operation.increment, output: 1,
///                          invocation: 3, response: 8, thread: 0)
/// ```
///
/// Thread safety: a plain value; `Sendable` when its input and output are.
public struct HistoryEntry<Input, Output> {
    /// The operation and its arguments.
    public var input: Input
    /// What the operation returned.
    public var output: Output
    /// The clock tick taken just before the operation started.
    public var invocation: UInt64
    /// The clock tick taken just after the operation returned; not before `invocation`.
    public var response: UInt64
    /// The thread (or any other label) that performed it, for descriptions.
    public var thread: Int

    /// Creates an entry.
    ///
    /// - Precondition: `invocation <= response`.
    public init(input: Input, output: Output, invocation: UInt64, response: UInt64, thread: Int = 0) {
        precondition(
            invocation <= response,
            "HistoryEntry: response (\(response)) must not come before invocation (\(invocation))")
        self.input = input
        self.output = output
        self.invocation = invocation
        self.response = response
        self.thread = thread
    }
}

extension HistoryEntry: Sendable where Input: Sendable, Output: Sendable {}
