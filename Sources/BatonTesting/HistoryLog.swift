/// One thread's part of a concurrent history: records each operation with ticks of a shared
/// ``LogicalClock`` around it.
///
/// Each thread keeps its own log, so recording adds no lock of its own to the structure under
/// test (only the clock's atomic increments); the logs are merged once the threads have
/// finished.
///
/// ```swift
/// var log = HistoryLog<CounterModel.Operation, Int>(clock: clock, thread: 2)
/// let value = log.record(.read) { counter.value }
/// // …after every thread has finished:
/// let history = logs.flatMap(\.entries)
/// ```
///
/// Thread safety: a value owned by one thread at a time; the clock it shares is thread-safe.
public struct HistoryLog<Input, Output> {
    /// The clock shared by every log of the history.
    public let clock: LogicalClock
    /// The label given to every entry of this log.
    public let thread: Int
    /// The operations recorded so far, in the order this thread performed them.
    public private(set) var entries: [HistoryEntry<Input, Output>] = []

    /// Creates an empty log for `thread`.
    public init(clock: LogicalClock, thread: Int) {
        self.clock = clock
        self.thread = thread
    }

    /// Performs `operation`, bracketed by two clock ticks, records it as `input` with the output
    /// it returns, and returns that output.
    ///
    /// - Parameters:
    ///   - input: The operation as the model knows it.
    ///   - operation: Performs it on the structure under test.
    /// - Returns: What `operation` returned.
    @discardableResult
    public mutating func record(_ input: Input, _ operation: () throws -> Output) rethrows -> Output {
        let invocation = clock.tick()
        let output = try operation()
        let response = clock.tick()
        entries.append(
            HistoryEntry(input: input, output: output, invocation: invocation, response: response, thread: thread))
        return output
    }
}

extension HistoryLog: Sendable where Input: Sendable, Output: Sendable {}
