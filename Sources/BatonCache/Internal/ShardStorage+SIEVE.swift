import Atomics

/// SIEVE: a hit sets the entry's visited bit; a hand walks from the oldest entry towards the
/// newest, clearing bits, and evicts the first entry whose bit is clear. TinyLFU's main list
/// is a SIEVE queue too.
extension ShardStorage {
    /// Marks slot `i` visited, writing only if its bit is clear, so that a hot entry's cache
    /// line is not written on every hit.
    @inlinable @inline(__always)
    func markVisited(_ i: Int) {
        if visited.load(i) == 0 { visited.store(1, at: i) }
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
}
