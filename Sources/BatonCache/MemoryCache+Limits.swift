import BatonLocks

/// The count and cost limits: read and changed on a live cache, and trimming below them.
extension MemoryCache {
    /// The most entries the cache holds, or `nil` for no limit.
    ///
    /// Settable on a live cache, like `NSCache.countLimit`. Lowering it evicts by the policy
    /// (reason `.count`) down to the new limit before the setter returns; raising it takes
    /// effect at once. `count <= countLimit` holds at every instant throughout: while a
    /// lowering evicts, writes are already admitted only up to the new limit, and the getter
    /// reports the new value once the cache holds no more than it. Eviction handlers run on
    /// the setting thread, outside the cache's locks. Must not be negative.
    ///
    /// Thread safety: may be read and set from any thread; concurrent setters take turns.
    /// The shard count chosen at init does not change.
    public var countLimit: Int? {
        get { Self.limit(budget.reported(.count)) }
        set { changeLimit(.count, to: newValue) }
    }

    /// The most total cost the cache holds, or `nil` for no limit.
    ///
    /// Settable on a live cache, like `NSCache.totalCostLimit`, with the same guarantees as
    /// ``countLimit``: lowering it evicts (reason `.cost`) down to it before the setter
    /// returns, and `totalCost <= costLimit` holds at every instant. Must not be negative.
    public var costLimit: Int? {
        get { Self.limit(budget.reported(.cost)) }
        set { changeLimit(.cost, to: newValue) }
    }

    /// Evicts entries by the policy (reason `.count`) until at most `count` remain. For apps
    /// that react to memory warnings themselves. The `countLimit` does not change.
    ///
    /// Shards are visited in turn, a share of the excess from each, so the entries that go are
    /// each shard's next victims.
    ///
    /// - Complexity: O(evicted entries + shards).
    public func trim(toCount count: Int) {
        precondition(count >= 0, "MemoryCache: trim(toCount:) needs a non-negative count (got \(count))")
        trim(reason: .count) { self.budget.count - count }
    }

    /// Evicts entries by the policy (reason `.cost`) until their total cost is at most `cost`.
    /// The `costLimit` does not change.
    ///
    /// - Complexity: O(evicted entries + shards).
    public func trim(toCost cost: Int) {
        precondition(cost >= 0, "MemoryCache: trim(toCost:) needs a non-negative cost (got \(cost))")
        trim(reason: .cost) { self.budget.cost - cost }
    }

    // MARK: Changing limits

    /// Sets `limit` to `newValue` (`nil` for none). Raising it takes effect at once. Lowering
    /// it admits writes only up to the new limit at once, evicts by the policy down to it, and
    /// only then publishes it, so the getter never reports a limit below what the cache holds.
    func changeLimit(_ limit: CacheBudget.Limit, to newValue: Int?) {
        let (name, reason): (String, EvictionReason) = limit == .count ? ("countLimit", .count) : ("costLimit", .cost)
        if let newValue {
            precondition(newValue >= 0, "MemoryCache: \(name) must not be negative (got \(newValue))")
        }
        let value = newValue ?? .max
        var evicted: [EvictionBatch<Key, Value>] = []
        limitChange.withLock {
            if value >= budget.reported(limit) {
                budget.raise(limit, to: value)
            } else {
                budget.admit(limit, upTo: value)
                evicted = trim(reason: reason, deliveringNow: false) { self.budget.current(limit) - value }
                budget.publish(limit, value)
            }
        }
        // Outside every lock, so a handler may use the cache, even set a limit.
        for batch in evicted { deliver(batch) }
    }

    /// A stored limit as the API spells it: `Int.max` is no limit.
    static func limit(_ stored: Int) -> Int? {
        stored == .max ? nil : stored
    }

    /// Evicts round-robin over the shards while `excess()` is positive, taking from each shard
    /// in turn up to its share of the excess.
    ///
    /// Unless `deliveringNow`, the evicted entries are returned instead of delivered, for a
    /// caller that holds a lock of its own and delivers them after dropping it.
    @discardableResult
    private func trim(
        reason: EvictionReason, deliveringNow: Bool = true, excess: () -> Int
    ) -> [EvictionBatch<Key, Value>] {
        var held: [EvictionBatch<Key, Value>] = []
        let now = currentTime()
        var idleShards = 0
        var next = 0
        while excess() > 0 && idleShards < shards.count {
            let shard = shards[next]
            next = (next + 1) & shardMask
            let share = max(1, excess() / shards.count)
            var evicted = EvictionBatch<Key, Value>()
            let evictedAny = shard.withWriteLock { state in
                var any = false
                for _ in 0..<share where excess() > 0 {
                    guard state.evictOne(now: now, reason: reason, evicted: &evicted) else { break }
                    any = true
                }
                return any
            }
            if deliveringNow {
                deliver(evicted)
            } else if !evicted.isEmpty {
                held.append(evicted)
            }
            idleShards = evictedAny ? 0 : idleShards + 1
        }
        return held
    }
}
