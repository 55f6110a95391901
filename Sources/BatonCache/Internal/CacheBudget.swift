import Atomics

/// The whole cache's count and cost, and their limits: the one place that makes the limits
/// exact across shards.
///
/// A shard stores an entry only after reserving room for it here, with a compare-and-swap
/// that never lets the total pass a limit, and gives the room back when the entry leaves. So
/// `count <= countLimit` and `totalCost <= costLimit` hold at every instant, not just within
/// each shard.
///
/// **Live limits.** Each limit exists twice. The *admission* limit is what reservations are
/// checked against; the *published* limit is what `MemoryCache.countLimit` reports. Raising a
/// limit publishes it first and then admits up to it; lowering one admits only up to the new
/// limit at once, and publishes it only after the cache has evicted down to it. So the
/// published limit is never below what the cache holds.
///
/// A reservation loads the limit and then compare-and-swaps the count: a writer that loaded
/// the old limit just before it changed could otherwise still reserve up to it after the
/// cache had been trimmed below the new one. So each counter word carries an *epoch* in its
/// top 16 bits, which a limit change bumps after storing the new admission limit: a
/// reservation whose word predates the change fails its compare-and-swap and loads the limit
/// again. The count and the cost live in the low 48 bits (2⁴⁸ entries, 256 TiB of cost).
///
/// The six words share one allocation, so an insertion touches one cache line.
@usableFromInline
final class CacheBudget {
    /// `[0]` count and epoch, `[1]` cost and epoch, `[2]` admitted count limit, `[3]` admitted
    /// cost limit, `[4]` published count limit, `[5]` published cost limit; `Int.max` is "no
    /// limit".
    @usableFromInline let storage: UnsafeMutablePointer<UnsafeAtomic<Int>.Storage>

    /// The bits of a counter word that hold the count or cost.
    @usableFromInline static var valueMask: Int { (1 << 48) - 1 }
    /// One step of a counter word's epoch.
    @usableFromInline static var epochStep: Int { 1 << 48 }

    @usableFromInline
    enum Reservation {
        case reserved
        case countExceeded
        case costExceeded
    }

    init(countLimit: Int?, costLimit: Int?) {
        storage = .allocate(capacity: 6)
        storage.initialize(repeating: .init(0), count: 2)
        (storage + 2).initialize(to: .init(countLimit ?? .max))
        (storage + 3).initialize(to: .init(costLimit ?? .max))
        (storage + 4).initialize(to: .init(countLimit ?? .max))
        (storage + 5).initialize(to: .init(costLimit ?? .max))
    }

    deinit {
        storage.deinitialize(count: 6)
        storage.deallocate()
    }

    @inlinable var countWord: UnsafeAtomic<Int> { UnsafeAtomic(at: storage) }
    @inlinable var costWord: UnsafeAtomic<Int> { UnsafeAtomic(at: storage + 1) }
    @inlinable var admittedCountLimit: UnsafeAtomic<Int> { UnsafeAtomic(at: storage + 2) }
    @inlinable var admittedCostLimit: UnsafeAtomic<Int> { UnsafeAtomic(at: storage + 3) }
    @inlinable var publishedCountLimit: UnsafeAtomic<Int> { UnsafeAtomic(at: storage + 4) }
    @inlinable var publishedCostLimit: UnsafeAtomic<Int> { UnsafeAtomic(at: storage + 5) }

    @inlinable var count: Int { countWord.load(ordering: .relaxed) & Self.valueMask }
    @inlinable var cost: Int { costWord.load(ordering: .relaxed) & Self.valueMask }

    /// The count limit writes are admitted against now (`Int.max` for none).
    @inlinable var countLimit: Int { admittedCountLimit.load(ordering: .relaxed) }
    /// The cost limit writes are admitted against now (`Int.max` for none).
    @inlinable var costLimit: Int { admittedCostLimit.load(ordering: .relaxed) }

    /// Takes room for `count` more entries (0 or 1) costing `cost`, or says which limit it
    /// would break (and takes nothing).
    @inlinable
    func reserve(count: Int, cost: Int) -> Reservation {
        if count != 0 && !Self.reserve(count, in: countWord, limit: admittedCountLimit) { return .countExceeded }
        if cost != 0 && !Self.reserve(cost, in: costWord, limit: admittedCostLimit) {
            if count != 0 { countWord.wrappingDecrement(by: count, ordering: .relaxed) }
            return .costExceeded
        }
        return .reserved
    }

    /// Takes `extra` more cost, or returns `false` and takes nothing if that would break
    /// the cost limit.
    @inlinable
    func reserveCost(_ extra: Int) -> Bool {
        Self.reserve(extra, in: costWord, limit: admittedCostLimit)
    }

    /// Adds `extra` to the counter in `word` unless that would pass `limit`. The word is
    /// loaded with acquire ordering before the limit: if it shows a limit change's epoch, the
    /// limit load sees that change; if it predates it, the compare-and-swap fails.
    @inlinable
    static func reserve(_ extra: Int, in word: UnsafeAtomic<Int>, limit: UnsafeAtomic<Int>) -> Bool {
        var current = word.load(ordering: .acquiring)
        while true {
            let limit = limit.load(ordering: .relaxed)
            if limit != .max && extra > limit - (current & valueMask) { return false }
            let (exchanged, original) = word.weakCompareExchange(
                expected: current, desired: current &+ extra, successOrdering: .relaxed,
                failureOrdering: .acquiring)
            if exchanged { return true }
            current = original
        }
    }

    /// Gives back the room of `count` entries whose costs add up to `cost`.
    @inlinable
    func release(count: Int, cost: Int) {
        if count != 0 { countWord.wrappingDecrement(by: count, ordering: .relaxed) }
        if cost != 0 { costWord.wrappingDecrement(by: cost, ordering: .relaxed) }
    }

    // MARK: Changing a limit (callers serialize these)

    /// One of the two limits: on the number of entries or on their total cost.
    enum Limit {
        case count
        case cost
    }

    /// The entries' count or total cost, as `limit` measures them.
    func current(_ limit: Limit) -> Int {
        words(limit).counter.load(ordering: .relaxed) & Self.valueMask
    }

    /// The value `MemoryCache.countLimit` or `costLimit` reports for `limit` (`Int.max` for
    /// none).
    func reported(_ limit: Limit) -> Int {
        words(limit).published.load(ordering: .acquiring)
    }

    /// Raises `limit` to `value`: published first, then admitted.
    func raise(_ limit: Limit, to value: Int) {
        words(limit).published.store(value, ordering: .relaxed)
        admit(limit, upTo: value)
    }

    /// Admits no more than `value` under `limit` from now on. When lowering a limit, the
    /// caller evicts down to it and then calls ``publish(_:_:)``.
    func admit(_ limit: Limit, upTo value: Int) {
        words(limit).admitted.store(value, ordering: .relaxed)
        words(limit).counter.wrappingIncrement(by: Self.epochStep, ordering: .releasing)
    }

    /// Publishes a lowered `limit` once the cache holds no more; a release store, so a reader
    /// that loads it (acquiring) and then the count or cost sees the evictions made for it.
    func publish(_ limit: Limit, _ value: Int) {
        words(limit).published.store(value, ordering: .releasing)
    }

    /// The words that hold `limit`'s counter, its admission limit and its published limit.
    func words(
        _ limit: Limit
    ) -> (counter: UnsafeAtomic<Int>, admitted: UnsafeAtomic<Int>, published: UnsafeAtomic<Int>) {
        switch limit {
        case .count: (countWord, admittedCountLimit, publishedCountLimit)
        case .cost: (costWord, admittedCostLimit, publishedCostLimit)
        }
    }
}

// Every word is only reached through atomic operations.
extension CacheBudget: @unchecked Sendable {}
