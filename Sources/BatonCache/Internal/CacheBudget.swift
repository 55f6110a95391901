import Atomics

/// The whole cache's count and cost, and their limits: the one place that makes the limits
/// exact across shards.
///
/// A shard stores an entry only after reserving room for it here, with a compare-and-swap
/// that never lets the total pass a limit, and gives the room back when the entry leaves. So
/// `count <= countLimit` and `totalCost <= costLimit` hold at every instant, not just within
/// each shard. Both counters share one cache line: an insertion touches both.
@usableFromInline
final class CacheBudget {
    /// `Int.max` when the cache has no count limit.
    @usableFromInline let countLimit: Int
    /// `Int.max` when the cache has no cost limit.
    @usableFromInline let costLimit: Int
    /// `[0]` the number of entries, `[1]` their total cost.
    @usableFromInline let storage: UnsafeMutablePointer<UnsafeAtomic<Int>.Storage>

    @usableFromInline
    enum Reservation {
        case reserved
        case countExceeded
        case costExceeded
    }

    init(countLimit: Int?, costLimit: Int?) {
        self.countLimit = countLimit ?? .max
        self.costLimit = costLimit ?? .max
        storage = .allocate(capacity: 2)
        storage.initialize(repeating: .init(0), count: 2)
    }

    deinit {
        storage.deinitialize(count: 2)
        storage.deallocate()
    }

    @inlinable var countAtomic: UnsafeAtomic<Int> { UnsafeAtomic(at: storage) }
    @inlinable var costAtomic: UnsafeAtomic<Int> { UnsafeAtomic(at: storage + 1) }

    @inlinable var count: Int { countAtomic.load(ordering: .relaxed) }
    @inlinable var cost: Int { costAtomic.load(ordering: .relaxed) }

    /// Takes room for `count` more entries (0 or 1) costing `cost`, or says which limit it
    /// would break (and takes nothing).
    @inlinable
    func reserve(count: Int = 1, cost: Int) -> Reservation {
        if count != 0 && !reserveCount(count) { return .countExceeded }
        if cost != 0 && !reserveCost(cost) {
            if count != 0 { countAtomic.wrappingDecrement(by: count, ordering: .relaxed) }
            return .costExceeded
        }
        return .reserved
    }

    /// Takes room for `extra` more entries, or returns `false` and takes nothing.
    @inlinable
    func reserveCount(_ extra: Int) -> Bool {
        if countLimit == .max {
            countAtomic.wrappingIncrement(by: extra, ordering: .relaxed)
            return true
        }
        var current = countAtomic.load(ordering: .relaxed)
        while true {
            if extra > countLimit - current { return false }
            let (exchanged, original) = countAtomic.weakCompareExchange(
                expected: current, desired: current + extra, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
    }

    /// Takes `extra` more cost, or returns `false` and takes nothing if that would break
    /// `costLimit`.
    @inlinable
    func reserveCost(_ extra: Int) -> Bool {
        if costLimit == .max {
            costAtomic.wrappingIncrement(by: extra, ordering: .relaxed)
            return true
        }
        var current = costAtomic.load(ordering: .relaxed)
        while true {
            if extra > costLimit - current { return false }
            let (exchanged, original) = costAtomic.weakCompareExchange(
                expected: current, desired: current + extra, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
    }

    /// Gives back the room of `count` entries whose costs add up to `cost`.
    @inlinable
    func release(count: Int, cost: Int) {
        if count != 0 { countAtomic.wrappingDecrement(by: count, ordering: .relaxed) }
        if cost != 0 { costAtomic.wrappingDecrement(by: cost, ordering: .relaxed) }
    }
}
// Both counters are only reached through atomic operations; the limits never change.
extension CacheBudget: @unchecked Sendable {}
