import Atomics

/// Window TinyLFU over SIEVE: new entries enter a small window list in front of the SIEVE
/// queue, and leave it either for the main list or for good, as the frequency sketch decides.
extension ShardStorage {
    /// TinyLFU's next entry to evict. While the window holds fewer than its share of the
    /// shard, SIEVE's victim from the main list. Otherwise the window's oldest entry (the
    /// candidate) meets SIEVE's victim: if the sketch has seen the candidate asked for more
    /// often, the candidate moves to the main list and the victim is evicted; if not (a tie
    /// included), the candidate is evicted. So an entry read once, such as each key of a scan,
    /// leaves from the window without displacing anything the main list holds. An expired
    /// entry is taken at once.
    @inlinable @inline(__always)
    mutating func tinyLFUVictim(now: Int64) -> Int32? {
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

    /// After an entry joined the window: grows the sketch to the shard's entries and moves the
    /// window's overflow to the main list.
    @inlinable @inline(__always)
    mutating func balanceWindow() {
        if let sketch, count > sketch.capacity { self.sketch = sketch.grown(toHold: count) }
        // Below the limits nothing is evicted: the window's overflow joins the main list.
        if windowCount > windowShare { promote(windowOldest) }
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
}
