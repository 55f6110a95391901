import Atomics

/// The entry slab: slots in one contiguous array, reused through a free list, and linked
/// newest to oldest on the main list or, under TinyLFU, on the window.
extension ShardStorage {
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
        if policy == .tinyLFU { balanceWindow() }
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
        if slots[Int(slot)].inWindow {
            Self.link(slot, in: &slots, newest: &windowNewest, oldest: &windowOldest)
            windowCount += 1
        } else {
            Self.link(slot, in: &slots, newest: &newest, oldest: &oldest)
        }
    }

    @inlinable
    mutating func unlink(_ slot: Int32) {
        if slots[Int(slot)].inWindow {
            Self.unlink(slot, in: &slots, newest: &windowNewest, oldest: &windowOldest)
            windowCount -= 1
        } else {
            Self.unlink(slot, in: &slots, newest: &newest, oldest: &oldest)
        }
    }

    /// Links `slot` at the newest end of the list whose ends are `newest` and `oldest`.
    @inlinable @inline(__always)
    static func link(_ slot: Int32, in slots: inout ContiguousArray<Slot>, newest: inout Int32, oldest: inout Int32) {
        let i = Int(slot)
        slots[i].newer = noSlot
        slots[i].older = newest
        if newest != noSlot {
            slots[Int(newest)].newer = slot
        } else {
            oldest = slot
        }
        newest = slot
    }

    /// Unlinks `slot` from the list whose ends are `newest` and `oldest`.
    @inlinable @inline(__always)
    static func unlink(_ slot: Int32, in slots: inout ContiguousArray<Slot>, newest: inout Int32, oldest: inout Int32) {
        let i = Int(slot)
        let newer = slots[i].newer
        let older = slots[i].older
        if newer != noSlot { slots[Int(newer)].older = older } else { newest = older }
        if older != noSlot { slots[Int(older)].newer = newer } else { oldest = newer }
    }
}

// Each slot sits in its shard's ``ShardStorage`` and is only touched under the shard's lock.
extension ShardStorage.Slot: Sendable where Key: Sendable, Value: Sendable {}
