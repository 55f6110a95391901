import Atomics

/// What the cache holds and what left it: its count, cost and statistics, and the eviction
/// handlers.
extension MemoryCache {
    /// The number of entries, including expired ones not yet released (the cache releases
    /// them within about a second; ``removeExpired()`` does it at once).
    ///
    /// - Complexity: O(1).
    public var count: Int { budget.count }

    /// The total cost of the entries, including expired ones not yet released.
    ///
    /// - Complexity: O(1).
    public var totalCost: Int { budget.cost }

    /// The hit, miss, insertion, eviction, expiration and removal counts so far.
    ///
    /// - Complexity: O(stripes): the counters are striped by thread (twice the cores, at
    ///   most 64 stripes), and this sums the stripes.
    public var statistics: CacheStatistics {
        var total = CacheStatistics()
        total.hits = counters.load(.hits)
        total.misses = counters.load(.misses)
        total.insertions = counters.load(.insertions)
        total.evictions = counters.load(.evictions)
        total.expirations = counters.load(.expirations)
        total.removals = counters.load(.removals)
        return total
    }

    /// How many of ``CacheStatistics/evictions`` the cost limit made.
    var costEvictions: Int { counters.load(.costEvictions) }

    /// Registers `handler` to be called for every entry that leaves the cache: evicted for a
    /// limit, expired, removed, or replaced — and for a write refused for its cost.
    ///
    /// Handlers run on the thread whose operation removed the entry, after the cache's locks
    /// are released and before that operation returns. Handlers cannot be removed.
    ///
    /// - Warning: A handler may read and write this cache (it holds no lock), but a write
    ///   that evicts calls the handlers again; guard against unbounded recursion.
    public func onEviction(_ handler: @escaping @Sendable (Key, Value, EvictionReason) -> Void) {
        handlers.append(handler)
    }

    /// Counts the entries that left and calls the eviction handlers. Called after the shard's
    /// lock is released; the batch, and the values in it, are released when it returns.
    @inlinable
    func deliver(_ evicted: borrowing EvictionBatch<Key, Value>) {
        guard !evicted.isEmpty else { return }
        var evictions = 0
        var costEvictions = 0
        var expirations = 0
        var removals = 0
        evicted.forEach { entry in
            switch entry.reason {
            case .count: evictions += 1
            case .cost:
                evictions += 1
                costEvictions += 1
            case .expired: expirations += 1
            case .removed, .replaced: removals += 1
            }
        }
        if evictions != 0 { counters.increment(.evictions, by: evictions) }
        if costEvictions != 0 { counters.increment(.costEvictions, by: costEvictions) }
        if expirations != 0 { counters.increment(.expirations, by: expirations) }
        if removals != 0 { counters.increment(.removals, by: removals) }
        guard handlers.isActive.load(ordering: .acquiring) else { return }
        let current = handlers.current
        evicted.forEach { entry in
            for handler in current { handler(entry.key, entry.value, entry.reason) }
        }
    }
}
