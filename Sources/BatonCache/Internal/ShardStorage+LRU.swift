/// LRU: a hit moves the entry to the newest end of the main list, and the oldest entry is
/// evicted.
extension ShardStorage {
    /// The oldest entry, or `nil` if the shard is empty.
    @inlinable @inline(__always)
    var lruVictim: Int32? { oldest != noSlot ? oldest : nil }

    @inlinable
    mutating func moveToNewest(_ slot: Int32) {
        guard newest != slot else { return }
        unlink(slot)
        linkNewest(slot)
    }
}
