import Atomics

/// A shared counter whose ticks order the events of a concurrent history in real time.
///
/// Every tick is a sequentially consistent atomic increment, so if one thread's tick is taken
/// after another thread's tick returned, it is larger. Taking a tick just before an operation
/// and just after it returns therefore brackets the moment the operation took effect:
/// ``HistoryEntry`` records both.
///
/// ```swift
/// let clock = LogicalClock()
/// var log = HistoryLog<CounterModel.Operation, Int>(clock: clock, thread: 0)
/// let value = log.record(.increment) { counter.increment() }
/// ```
///
/// Thread safety: every method may be called from any thread.
public final class LogicalClock: Sendable {
    private let counter = ManagedAtomic<UInt64>(0)

    /// Creates a clock whose first tick is 1.
    public init() {}

    /// Advances the clock and returns the new tick.
    public func tick() -> UInt64 {
        counter.wrappingIncrementThenLoad(ordering: .sequentiallyConsistent)
    }

    /// The last tick handed out (0 before the first).
    public var now: UInt64 {
        counter.load(ordering: .sequentiallyConsistent)
    }
}
