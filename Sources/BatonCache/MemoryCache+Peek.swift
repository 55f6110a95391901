/// Quiet lookups: reading the cache without changing what it keeps.
extension MemoryCache {
    /// The value stored for `key` if it is present and has not expired, read quietly: unlike
    /// ``value(forKey:)`` it counts as neither a hit nor a miss, does not mark the entry as
    /// recently used (SIEVE's visited bit, LRU's order) and does not refresh its idle time, so
    /// looking does not change what the cache keeps. An expired entry reads as absent and is
    /// not removed here.
    ///
    /// Thread safety: takes the key's shard's read lock, like a SIEVE hit.
    ///
    /// - Complexity: O(1) on average.
    @inlinable
    public func peek(_ key: Key) -> Value? {
        let now = currentTime()
        let hash = key.hashValue
        return shardTable.withShard(hash & shardMask) { $0.peek(key, hash: hash, now: now) }
    }

    /// Whether a value that has not expired is stored for `key`, checked as quietly as
    /// ``peek(_:)``: no statistics, no recency, no idle-time refresh.
    ///
    /// - Complexity: O(1) on average.
    @inlinable
    public func contains(_ key: Key) -> Bool {
        peek(key) != nil
    }
}
