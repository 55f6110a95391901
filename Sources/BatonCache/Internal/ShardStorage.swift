import Atomics

/// The time limits of a cache, in nanoseconds of its ``CacheClock``.
@usableFromInline
struct Expiry: Sendable {
    /// Entries expire this long after they were written, if set.
    @usableFromInline let timeToLive: Int64?
    /// Entries expire this long after they were last read (or written), if set.
    @usableFromInline let timeToIdle: Int64?

    @usableFromInline
    init(timeToLive: Int64?, timeToIdle: Int64?) {
        self.timeToLive = timeToLive
        self.timeToIdle = timeToIdle
    }

    /// Whether every entry can expire; when not, and no entry has a lifetime of its own, no
    /// operation reads the clock.
    @inlinable var isEnabled: Bool { timeToLive != nil || timeToIdle != nil }

    /// The deadline of an entry written at `now` with its own lifetime (nanoseconds), or the
    /// cache's, or none (`Int64.max`). Saturates rather than wraps.
    @inlinable
    func deadline(writtenAt now: Int64, lifetime: Int64?) -> Int64 {
        guard let lifetime = lifetime ?? timeToLive else { return .max }
        let (sum, overflow) = now.addingReportingOverflow(lifetime)
        return overflow ? .max : sum
    }
}

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
    /// An entry's place in the policy's lists, its cost and deadline; its key and value are
    /// in the index.
    @usableFromInline
    struct Slot {
        @usableFromInline var cost: Int
        /// When the value's lifetime ends, in clock nanoseconds: written time plus the entry's
        /// own `timeToLive` or the cache's; `Int64.max` for never.
        @usableFromInline var expiresAt: Int64
        /// Towards the newest entry; `noSlot` at the newest.
        @usableFromInline var newer: Int32
        /// Towards the oldest entry; `noSlot` at the oldest. Links the free list too.
        @usableFromInline var older: Int32
        /// TinyLFU: whether the entry is on the window list rather than the main one.
        @usableFromInline var inWindow: Bool

        @inlinable
        init(cost: Int, expiresAt: Int64) {
            self.cost = cost
            self.expiresAt = expiresAt
            newer = noSlot
            older = noSlot
            inWindow = false
        }
    }

    @usableFromInline let policy: EvictionPolicy
    @usableFromInline let expiry: Expiry
    /// The whole cache's count and cost; every slot filled or freed here is reserved or
    /// released there.
    @usableFromInline let budget: CacheBudget
    /// Key to value and slot; slot to key. Its memory is freed by ``deallocate()``.
    @usableFromInline var index = ShardIndex<Key, Value>()
    @usableFromInline var slots: ContiguousArray<Slot> = []
    /// The head of the free list, chained through `older`.
    @usableFromInline var freeSlot: Int32 = noSlot
    @usableFromInline var newest: Int32 = noSlot
    @usableFromInline var oldest: Int32 = noSlot
    /// SIEVE's hand: the next eviction candidate, moving from oldest towards newest; `noSlot`
    /// starts again at the oldest.
    @usableFromInline var hand: Int32 = noSlot
    /// SIEVE's visited bit per slot, set by lookups under the read lock.
    @usableFromInline var visited: AtomicSlots<UInt8>
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
    /// Whether any entry of this shard can expire: the cache has a time limit, or an entry was
    /// written with a lifetime of its own. Set once, never cleared; while it is false, no
    /// expiry check reads anything.
    @usableFromInline var mayExpire: Bool
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
            lastRead?.raise(to: now, at: i)
        }
        switch policy {
        case .lru: moveToNewest(slot)
        case .sieve, .tinyLFU: if visited.load(i) == 0 { visited.store(1, at: i) }
        }
        return .hit(index.value(at: bucket))
    }

    // MARK: Writes

    /// Stores `value` for `key`, evicting from this shard until the cache has room. A new key
    /// becomes the newest entry. An entry already stored for `key` is replaced (reason
    /// `.replaced`) — unless `ifAbsent`, when a live one is returned instead. A replacement
    /// counts as an access: SIEVE keeps the entry where it is and marks it visited, LRU moves
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
        if mayExpire && now >= nextSweep {
            nextSweep = now &+ writeSweepSpacing
            if !wheel.isEmpty { removeExpired(now: now, evicted: &evicted) }
        }
        let bucket = index.find(key, hash: hash)
        if bucket >= 0 {
            let slot = index.slot(at: bucket)
            let i = Int(slot)
            let expired = mayExpire && isExpired(i, now: now)
            if ifAbsent && !expired {
                if policy == .lru { moveToNewest(slot) }
                return .present(index.value(at: bucket))
            }
            let extra = cost - slots[i].cost
            if !expired && (extra <= 0 || budget.reserveCost(extra)) {
                if extra < 0 { budget.release(count: 0, cost: -extra) }
                let old = index.replaceValue(at: bucket, with: value)
                slots[i].cost = cost
                slots[i].expiresAt = expiresAt
                totalCost += extra
                lastRead?.raise(to: now, at: i)
                scheduleExpiry(slot, now: now)
                switch policy {
                case .lru: moveToNewest(slot)
                case .sieve, .tinyLFU: if visited.load(i) == 0 { visited.store(1, at: i) }
                }
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

    /// Removes every expired entry, found through the wheel: O(expired entries, plus idle
    /// entries whose check came due but that were read since, plus the wheel's buckets
    /// passed), not O(n).
    @usableFromInline
    mutating func removeExpired(now: Int64, evicted: inout EvictionBatch<Key, Value>) {
        guard mayExpire, !wheel.isEmpty else { return }
        var due: [Int32] = []
        wheel.expire(upTo: now, into: &due)
        for slot in due {
            if isExpired(Int(slot), now: now) {
                let old = removeSlot(slot)
                evicted.append(old.key, old.value, .expired)
            } else {
                // Read since it was scheduled: check again at its new idle deadline.
                wheel.schedule(slot, at: nextCheck(Int(slot)))
            }
        }
    }

    /// Whether no entry of this shard can expire (so no sweep is needed for it).
    @inlinable var hasNothingToExpire: Bool { wheel.isEmpty }

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

    /// The next entry to evict: LRU's oldest, or the first unvisited entry at or after
    /// SIEVE's hand (clearing visited bits on the way). An expired entry is taken at once.
    ///
    /// TinyLFU: while the window holds fewer than its share of the shard, SIEVE's victim from
    /// the main list. Otherwise the window's oldest entry (the candidate) meets SIEVE's victim:
    /// if the sketch has seen the candidate asked for more often, the candidate moves to the
    /// main list and the victim is evicted; if not (a tie included), the candidate is evicted.
    /// So an entry read once, such as each key of a scan, leaves from the window without
    /// displacing anything the main list holds.
    @inlinable
    mutating func chooseVictim(now: Int64) -> Int32? {
        switch policy {
        case .lru:
            return oldest != noSlot ? oldest : nil
        case .sieve:
            return oldest != noSlot ? sieveVictim(now: now) : nil
        case .tinyLFU:
            let candidate = windowOldest
            // Counting the entry about to be stored, the window would pass its share.
            guard candidate != noSlot, windowCount >= windowShare || oldest == noSlot else {
                return oldest != noSlot ? sieveVictim(now: now) : nil
            }
            if oldest == noSlot || (mayExpire && isExpired(Int(candidate), now: now)) { return candidate }
            let victim = sieveVictim(now: now)
            if mayExpire && isExpired(Int(victim), now: now) { return victim }
            guard let sketch, sketch.estimate(hash(candidate)) > sketch.estimate(hash(victim)) else {
                return candidate
            }
            promote(candidate)
            return victim
        }
    }

    /// SIEVE on the main list (not empty): the first unvisited or expired entry at or after
    /// the hand, clearing visited bits on the way; the hand stays on it.
    @inlinable
    mutating func sieveVictim(now: Int64) -> Int32 {
        var slot = hand != noSlot ? hand : oldest
        while true {
            let i = Int(slot)
            if visited.load(i) == 0 || (mayExpire && isExpired(i, now: now)) {
                hand = slot
                return slot
            }
            visited.store(0, at: i)
            slot = slots[i].newer
            if slot == noSlot { slot = oldest }
        }
    }

    /// TinyLFU's window size: 1% of the shard's entries, at least one — enough to let a new
    /// entry be asked for again before it must prove itself, small enough that the main list,
    /// which keeps the frequently asked-for entries, has nearly all the room.
    @inlinable var windowShare: Int { max(1, count / 100) }

    /// The hash the sketch counts a slot's key under.
    @inlinable
    func hash(_ slot: Int32) -> Int {
        index.hash(ofSlot: slot)
    }

    /// Moves a TinyLFU window entry to the newest end of the main list, unvisited.
    @inlinable
    mutating func promote(_ slot: Int32) {
        unlink(slot)
        slots[Int(slot)].inWindow = false
        linkNewest(slot)
        visited.store(0, at: Int(slot))
    }

    @inlinable
    func isExpired(_ i: Int, now: Int64) -> Bool {
        if now >= slots[i].expiresAt { return true }
        if let timeToIdle = expiry.timeToIdle, let lastRead, now &- lastRead.load(i) >= timeToIdle {
            return true
        }
        return false
    }

    /// When slot `i` should next be checked: the earlier of its deadline and its idle
    /// deadline as of its last read; `Int64.max` if it can never expire.
    @inlinable
    func nextCheck(_ i: Int) -> Int64 {
        var check = slots[i].expiresAt
        if let timeToIdle = expiry.timeToIdle, let lastRead {
            let (idleEnd, overflow) = lastRead.load(i).addingReportingOverflow(timeToIdle)
            if !overflow { check = min(check, idleEnd) }
        }
        return check
    }

    /// Puts `slot` in the wheel at its next check, or takes it out if it can never expire.
    @inlinable
    mutating func scheduleExpiry(_ slot: Int32, now: Int64) {
        guard mayExpire else { return }
        let check = nextCheck(Int(slot))
        if check == .max {
            wheel.cancel(slot)
        } else {
            wheel.reschedule(slot, at: check)
        }
    }

    // MARK: The slab and the list

    @inlinable
    mutating func insertNewest(_ key: Key, hash: Int, _ value: Value, cost: Int, expiresAt: Int64, now: Int64) {
        let entry = Slot(cost: cost, expiresAt: expiresAt)
        let slot: Int32
        if freeSlot != noSlot {
            slot = freeSlot
            freeSlot = slots[Int(slot)].older
            slots[Int(slot)] = entry
        } else {
            precondition(slots.count < Int(Int32.max), "MemoryCache: too many entries in one shard")
            slot = Int32(slots.count)
            slots.append(entry)
            if slots.count > visited.capacity { growAtomics() }
        }
        let i = Int(slot)
        visited.store(0, at: i)
        lastRead?.store(now, at: i)
        if policy == .tinyLFU { slots[i].inWindow = true }
        linkNewest(slot)
        index.insert(key, hash: hash, value: value, slot: slot)
        totalCost += cost
        scheduleExpiry(slot, now: now)
        if policy == .tinyLFU {
            if let sketch, count > sketch.capacity { self.sketch = sketch.grown(toHold: count) }
            // Below the limits nothing is evicted: the window's overflow joins the main list.
            if windowCount > windowShare { promote(windowOldest) }
        }
    }

    @usableFromInline
    mutating func growAtomics() {
        let capacity = max(initialCapacity, slots.capacity, visited.capacity * 2)
        visited = visited.grown(to: capacity, initial: 0)
        lastRead = lastRead?.grown(to: capacity, initial: 0)
    }

    /// Unlinks a slot, frees it, gives its room back to the budget (unless the caller keeps it
    /// for an entry it is about to store) and returns what it held.
    @inlinable
    mutating func removeSlot(
        _ slot: Int32, releasingBudget: Bool = true
    ) -> (key: Key, value: Value, cost: Int) {
        let i = Int(slot)
        if hand == slot { hand = slots[i].newer }
        if mayExpire { wheel.cancel(slot) }
        unlink(slot)
        let (key, value) = index.remove(slot: slot)
        let cost = slots[i].cost
        totalCost -= cost
        if releasingBudget { budget.release(count: 1, cost: cost) }
        slots[i].older = freeSlot
        freeSlot = slot
        return (key, value, cost)
    }

    /// Links a slot at the newest end of its list: the window if it is marked so, the main
    /// list otherwise.
    @inlinable
    mutating func linkNewest(_ slot: Int32) {
        let i = Int(slot)
        slots[i].newer = noSlot
        if slots[i].inWindow {
            slots[i].older = windowNewest
            if windowNewest != noSlot {
                slots[Int(windowNewest)].newer = slot
            } else {
                windowOldest = slot
            }
            windowNewest = slot
            windowCount += 1
            return
        }
        slots[i].older = newest
        if newest != noSlot {
            slots[Int(newest)].newer = slot
        } else {
            oldest = slot
        }
        newest = slot
    }

    @inlinable
    mutating func unlink(_ slot: Int32) {
        let i = Int(slot)
        let newer = slots[i].newer
        let older = slots[i].older
        if slots[i].inWindow {
            if newer != noSlot { slots[Int(newer)].older = older } else { windowNewest = older }
            if older != noSlot { slots[Int(older)].newer = newer } else { windowOldest = newer }
            windowCount -= 1
            return
        }
        if newer != noSlot { slots[Int(newer)].older = older } else { newest = older }
        if older != noSlot { slots[Int(older)].newer = newer } else { oldest = newer }
    }

    @inlinable
    mutating func moveToNewest(_ slot: Int32) {
        guard newest != slot else { return }
        unlink(slot)
        linkNewest(slot)
    }

    // MARK: Checks

    /// Problems with the shard's structure, for tests: the list, the index, the free list and
    /// the cost must agree. Empty when all is well.
    func invariantViolations() -> [String] {
        var problems: [String] = []
        var seen = 0
        var cost = 0
        var windowSeen = 0
        for (list, start, end) in [("list", oldest, newest), ("window", windowOldest, windowNewest)] {
            var slot = start
            var previous = noSlot
            let before = seen
            while slot != noSlot, seen <= slots.count {
                let i = Int(slot)
                guard index.hasEntry(inSlot: slot) else {
                    problems.append("slot \(slot) is on the \(list) but empty")
                    break
                }
                if index.slot(of: index.key(ofSlot: slot)) != slot {
                    problems.append("index does not point at slot \(slot)")
                }
                if slots[i].older != previous { problems.append("slot \(slot) has a wrong back link") }
                if slots[i].inWindow != (list == "window") { problems.append("slot \(slot) is on the wrong list") }
                cost += slots[i].cost
                seen += 1
                previous = slot
                slot = slots[i].newer
            }
            if previous != end { problems.append("the \(list) does not end at its newest entry") }
            if list == "window" { windowSeen = seen - before }
        }
        if windowSeen != windowCount { problems.append("window holds \(windowSeen) entries, counted \(windowCount)") }
        if policy != .tinyLFU && windowSeen != 0 { problems.append("a \(policy) shard has a window") }
        if hand != noSlot && (!index.hasEntry(inSlot: hand) || slots[Int(hand)].inWindow) {
            problems.append("the hand is not on the main list")
        }
        if seen != index.count { problems.append("lists hold \(seen) entries, index \(index.count)") }
        if cost != totalCost { problems.append("costs add up to \(cost), recorded \(totalCost)") }
        var free = 0
        var slot = freeSlot
        while slot != noSlot, free <= slots.count {
            if index.hasEntry(inSlot: slot) { problems.append("free slot \(slot) holds a key") }
            free += 1
            slot = slots[Int(slot)].older
        }
        if free + seen != slots.count { problems.append("\(free) free + \(seen) used != \(slots.count) slots") }
        var expiring = 0
        index.forEach { _, _, slot in
            guard nextCheck(Int(slot)) != .max else { return }
            expiring += 1
            if !wheel.isScheduled(slot) { problems.append("slot \(slot) can expire but is not scheduled") }
        }
        if wheel.count != expiring { problems.append("the wheel holds \(wheel.count) slots, \(expiring) can expire") }
        problems += wheel.invariantViolations().map { "wheel: \($0)" }
        problems += index.invariantViolations().map { "index: \($0)" }
        return problems
    }
}

/// The "no slot" link.
@usableFromInline let noSlot: Int32 = -1

/// Slots a shard starts with room for in its atomics; they double as it grows.
@usableFromInline let initialCapacity = 16

/// How often, in clock nanoseconds, writes to a shard sweep its expired entries: about 134 ms.
@usableFromInline let writeSweepSpacing: Int64 = 1 << 27

// Each shard's state sits inside its ``CacheShard`` and is only touched under the shard's lock;
// sharing it shares its keys and values, hence the conditions.
extension ShardStorage: Sendable where Key: Sendable, Value: Sendable {}
extension ShardStorage.Slot: Sendable where Key: Sendable, Value: Sendable {}
