import Atomics

/// What a lookup found.
@usableFromInline
enum Lookup<Value> {
    case hit(Value)
    case miss
    /// The entry is there but expired; the caller must remove it under the exclusive lock.
    case expired
}

/// What a write did.
@usableFromInline
enum StoreOutcome<Value> {
    case stored
    /// `ifAbsent` was set and a live entry was already there: nothing was written.
    case present(Value)
    /// This shard has nothing left to evict but the cache is still over the limit: the caller
    /// must evict from another shard (without this shard's lock) and try again.
    case needsRoom(EvictionReason)
}

/// The contents of one shard and its eviction policy: a hash index from key to value and slot,
/// and the slots in a slab linked newest to oldest (the SIEVE queue, or the LRU list; TinyLFU
/// keeps a second list, its window of new entries, in front of its SIEVE queue).
///
/// Every method runs with the shard's lock held; the methods marked "shared" need only the
/// read lock (they write nothing but the atomics in ``visited`` and ``lastRead``), the
/// `mutating` ones need the write lock. Entries that leave are appended to an
/// ``EvictionBatch`` and reach handlers, and are released, only after the lock is dropped.
///
/// Slots live in one contiguous array addressed by `Int32` index, so the policy's links cost no
/// allocation or reference counting per entry; freed slots are reused through a free list. The
/// key and value sit in the index (``ShardIndex``) beside the slot number, so a hit reads one
/// hash-table bucket and one visited byte, not a slot too. The cache hashes each key once and
/// passes the hash to every method that takes a key.
@usableFromInline
struct ShardStorage<Key: Hashable, Value> {
    // Guarded by the owning ``CacheShard``'s `lock`: every `var` below is written under its
    // write lock only and read under either; the atomics that `visited`, `lastRead` and
    // `sketch` point to are written under the read lock too. The `let`s never change.
    //
    // A shared lookup reads the policy, `mayExpire`, `visited` and the index's first two words,
    // so they come first: with the handle of the shard's lock before them, 48 bytes of the shard
    // object, one or two cache lines rather than the four they were spread over.
    @usableFromInline let policy: EvictionPolicy
    /// Whether any entry of this shard can expire: the cache has a time limit, or an entry was
    /// written with a lifetime of its own. Set once, never cleared; while it is false, no
    /// expiry check reads anything.
    @usableFromInline var mayExpire: Bool
    /// SIEVE's visited bit per slot, set by lookups under the read lock.
    @usableFromInline var visited: AtomicSlots<UInt8>
    /// Key to value and slot; slot to key. Its memory is freed by ``deallocate()``.
    @usableFromInline var index = ShardIndex<Key, Value>()
    @usableFromInline let expiry: Expiry
    /// The whole cache's count and cost; every slot filled or freed here is reserved or
    /// released there.
    @usableFromInline let budget: CacheBudget
    @usableFromInline var slots: ContiguousArray<Slot> = []
    /// The head of the free list, chained through `older`.
    @usableFromInline var freeSlot: Int32 = noSlot
    @usableFromInline var newest: Int32 = noSlot
    @usableFromInline var oldest: Int32 = noSlot
    /// SIEVE's hand: the next eviction candidate, moving from oldest towards newest; `noSlot`
    /// starts again at the oldest.
    @usableFromInline var hand: Int32 = noSlot
    /// TinyLFU's window of new entries, linked like the main list: newest and oldest, and how
    /// many it holds. Empty under the other policies.
    @usableFromInline var windowNewest: Int32 = noSlot
    @usableFromInline var windowOldest: Int32 = noSlot
    @usableFromInline var windowCount = 0
    /// TinyLFU's request counts, bumped by lookups under the read lock; `nil` under the other
    /// policies.
    @usableFromInline var sketch: FrequencySketch?
    /// The clock time of each slot's last read, when `timeToIdle` is set.
    @usableFromInline var lastRead: AtomicSlots<Int64>?
    @usableFromInline var totalCost = 0
    /// Every entry that can expire, by the time it will next be checked: the earlier of its
    /// deadline and its idle deadline as of its last write. A read that refreshes the idle
    /// time (under the shared lock) does not move it; the sweep finds it still live and puts
    /// it back at its new idle deadline.
    @usableFromInline var wheel = TimerWheel()
    /// The earliest clock time at which a write sweeps the wheel again.
    @usableFromInline var nextSweep: Int64 = .min

    /// An empty shard. The atomics are passed in when a shard is emptied, so that their
    /// memory is reused rather than freed (a drained copy may still refer to it).
    @usableFromInline
    init(
        policy: EvictionPolicy, expiry: Expiry, budget: CacheBudget,
        visited: AtomicSlots<UInt8>? = nil, lastRead: AtomicSlots<Int64>? = nil,
        sketch: FrequencySketch? = nil
    ) {
        self.policy = policy
        self.expiry = expiry
        self.budget = budget
        self.visited = visited ?? AtomicSlots(capacity: initialCapacity, initial: 0)
        self.sketch = policy == .tinyLFU ? sketch ?? FrequencySketch(capacity: initialCapacity) : nil
        self.lastRead = expiry.timeToIdle == nil ? nil : lastRead ?? AtomicSlots(capacity: initialCapacity, initial: 0)
        mayExpire = expiry.isEnabled
    }

    /// Frees the index and the atomics; the shard calls it once, from its `deinit`.
    func deallocate() {
        index.deallocate()
        visited.deallocate()
        lastRead?.deallocate()
        sketch?.deallocate()
    }

    @inlinable var count: Int { index.count }

    // MARK: Lookups

    /// Exclusive: finds a live entry, removing it if it has expired. LRU moves a hit to the
    /// front; SIEVE and TinyLFU set its visited bit. TinyLFU's sketch is not bumped here: a
    /// TinyLFU lookup comes here only after ``CacheShard/lookupShared(_:now:)`` counted it.
    @inlinable
    mutating func lookupExclusive(
        _ key: Key, hash: Int, now: Int64, evicted: inout EvictionBatch<Key, Value>
    ) -> Lookup<Value> {
        let bucket = index.find(key, hash: hash)
        guard bucket >= 0 else { return .miss }
        let slot = index.slot(at: bucket)
        let i = Int(slot)
        if mayExpire {
            if isExpired(i, now: now) {
                let old = removeSlot(slot)
                evicted.append(old.key, old.value, .expired)
                return .expired
            }
        }
        use(slot, now: now)
        return .hit(index.value(at: bucket))
    }

    /// Records a use of the live entry in `slot`, as a hit does: its read time (under an idle
    /// limit) and its recency (LRU moves it to the front; SIEVE and TinyLFU set its visited bit).
    @inlinable
    mutating func use(_ slot: Int32, now: Int64) {
        let i = Int(slot)
        lastRead?.raise(to: now, at: i)
        switch policy {
        case .lru: moveToNewest(slot)
        case .sieve, .tinyLFU: markVisited(i)
        }
    }

    // MARK: Writes

    /// Stores `value` for `key`, evicting from this shard until the cache has room. A new key
    /// becomes the newest entry. An entry already stored for `key` is replaced (reason
    /// `.replaced`) — unless `ifAbsent`, when a live one is returned instead. Either counts as a
    /// use (``use(_:now:)``): SIEVE keeps the entry where it is and marks it visited, LRU moves
    /// it to the front. An expired entry is removed (`.expired`) and the key stored anew.
    ///
    /// The caller has already refused an entry that can never fit (cost above `costLimit`, or
    /// `countLimit` 0). `expiresAt` is the new value's deadline (`Int64.max` for none).
    ///
    /// Every so often (``writeSweepSpacing``) a write first releases this shard's expired
    /// entries, so that they leave without waiting for a lookup to meet them. Under TinyLFU, a
    /// write also ages the sketch when enough lookups were counted since it last did.
    @inlinable
    mutating func store(
        _ key: Key, hash: Int, _ value: Value, cost: Int, expiresAt: Int64, now: Int64, ifAbsent: Bool,
        evicted: inout EvictionBatch<Key, Value>
    ) -> StoreOutcome<Value> {
        if let sketch, sketch.isDueForAging { sketch.age() }
        if expiresAt != .max { mayExpire = true }
        sweepIfDue(now: now, evicted: &evicted)
        let bucket = index.find(key, hash: hash)
        if bucket >= 0 {
            let slot = index.slot(at: bucket)
            let i = Int(slot)
            let expired = mayExpire && isExpired(i, now: now)
            if ifAbsent && !expired {
                use(slot, now: now)
                return .present(index.value(at: bucket))
            }
            let extra = cost - slots[i].cost
            if !expired && (extra <= 0 || budget.reserveCost(extra)) {
                if extra < 0 { budget.release(count: 0, cost: -extra) }
                let old = index.replaceValue(at: bucket, with: value)
                slots[i].cost = cost
                slots[i].expiresAt = expiresAt
                totalCost += extra
                use(slot, now: now)
                scheduleExpiry(slot, now: now)
                evicted.append(key, old, .replaced)
                return .stored
            }
            // Expired, or the larger cost needs room: remove it and store the key anew.
            let old = removeSlot(slot)
            evicted.append(old.key, old.value, expired ? .expired : .replaced)
        }
        // Room freed by the entries evicted below is kept for the new entry rather than given
        // back to the budget and taken again: at the limit, a write that evicts one entry to
        // store one costs no atomic operation on the budget at all.
        var heldCount = 0
        var heldCost = 0
        while true {
            let needCount = max(0, 1 - heldCount)
            let needCost = max(0, cost - heldCost)
            let reason: EvictionReason
            switch budget.reserve(count: needCount, cost: needCost) {
            case .reserved:
                let surplusCount = heldCount + needCount - 1
                let surplusCost = heldCost + needCost - cost
                if surplusCount != 0 || surplusCost != 0 {
                    budget.release(count: surplusCount, cost: surplusCost)
                }
                insertNewest(key, hash: hash, value, cost: cost, expiresAt: expiresAt, now: now)
                return .stored
            case .countExceeded: reason = .count
            case .costExceeded: reason = .cost
            }
            guard let victim = chooseVictim(now: now) else {
                if heldCount != 0 || heldCost != 0 { budget.release(count: heldCount, cost: heldCost) }
                return .needsRoom(reason)
            }
            let expired = mayExpire && isExpired(Int(victim), now: now)
            let old = removeSlot(victim, releasingBudget: false)
            heldCount += 1
            heldCost += old.cost
            evicted.append(old.key, old.value, expired ? .expired : reason)
        }
    }

    /// Removes the entry for `key`, if any, reporting it with `reason`. Returns its value if it
    /// was live; an expired entry is removed with reason `.expired` and `nil` is returned.
    @inlinable
    mutating func removeValue(
        forKey key: Key, hash: Int, now: Int64, reason: EvictionReason = .removed,
        evicted: inout EvictionBatch<Key, Value>
    ) -> Value? {
        let bucket = index.find(key, hash: hash)
        guard bucket >= 0 else { return nil }
        let slot = index.slot(at: bucket)
        let expired = mayExpire && isExpired(Int(slot), now: now)
        let old = removeSlot(slot)
        evicted.append(old.key, old.value, expired ? .expired : reason)
        return expired ? nil : old.value
    }

    /// Evicts the policy's next victim (or, if that has expired, as `.expired`). Returns
    /// `false` if the shard is empty.
    @inlinable
    mutating func evictOne(
        now: Int64, reason: EvictionReason, evicted: inout EvictionBatch<Key, Value>
    ) -> Bool {
        guard let victim = chooseVictim(now: now) else { return false }
        let expired = mayExpire && isExpired(Int(victim), now: now)
        let old = removeSlot(victim)
        evicted.append(old.key, old.value, expired ? .expired : reason)
        return true
    }

    /// Empties the shard and returns its index, so that the caller can report and release the
    /// entries after the lock is dropped; the caller owns it and frees it with
    /// ``ShardIndex/deallocate()``. The shard keeps its atomics and starts a new index.
    @usableFromInline
    mutating func removeAll() -> ShardIndex<Key, Value> {
        let drained = index
        budget.release(count: count, cost: totalCost)
        self = ShardStorage(
            policy: policy, expiry: expiry, budget: budget, visited: visited, lastRead: lastRead,
            sketch: sketch)
        return drained
    }

    // MARK: The policy

    /// The next entry to evict, by the policy: LRU's oldest, SIEVE's first unvisited entry at
    /// or after its hand (clearing visited bits on the way), or TinyLFU's choice between its
    /// window's oldest entry and SIEVE's victim (``tinyLFUVictim(now:)``). An expired entry is
    /// taken at once.
    @inlinable
    mutating func chooseVictim(now: Int64) -> Int32? {
        switch policy {
        case .lru:
            return lruVictim
        case .sieve:
            return oldest != noSlot ? sieveVictim(now: now) : nil
        case .tinyLFU:
            return tinyLFUVictim(now: now)
        }
    }
}

/// The "no slot" link.
@usableFromInline let noSlot: Int32 = -1

/// Slots a shard starts with room for in its atomics; they double as it grows.
@usableFromInline let initialCapacity = 16

// Each shard's state sits inside its ``CacheShard`` and is only touched under the shard's lock;
// sharing it shares its keys and values, hence the conditions.
extension ShardStorage: Sendable where Key: Sendable, Value: Sendable {}
