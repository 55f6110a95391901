/// A snapshot of a ``MemoryCache``'s counters.
///
/// The counters are kept per shard and summed when ``MemoryCache/statistics`` is read, so
/// counting never becomes a point of contention. A snapshot taken while other threads use the
/// cache is a consistent sum of each shard's counters at slightly different moments; once the
/// cache is quiet, the counters add up exactly:
///
/// - `hits + misses` is the number of lookups (`value(forKey:)`, the subscript's getter, and the
///   lookup at the start of every `value(forKey:orInsert:)`).
/// - `count == insertions - evictions - expirations - removals`.
///
/// Thread safety: a plain value; `Sendable`.
public struct CacheStatistics: Sendable, Hashable, CustomStringConvertible {
    /// Lookups that found a live entry.
    public var hits: Int
    /// Lookups that found nothing, or only an expired entry.
    public var misses: Int
    /// Writes: every `setValue`, subscript assignment of a value, and value stored by
    /// `value(forKey:orInsert:)`, including writes refused because the entry's cost alone
    /// exceeds `costLimit` (those are also counted in ``evictions``).
    public var insertions: Int
    /// Entries evicted by the policy for `countLimit` or `costLimit` (reasons `.count`, `.cost`),
    /// including by `trim(toCount:)` and `trim(toCost:)`.
    public var evictions: Int
    /// Entries removed because their time-to-live or time-to-idle ran out (reason `.expired`).
    public var expirations: Int
    /// Entries removed by `removeValue(forKey:)`, `removeAll()`, or replaced by a new write for
    /// the same key (reasons `.removed`, `.replaced`).
    public var removals: Int

    public init(
        hits: Int = 0, misses: Int = 0, insertions: Int = 0, evictions: Int = 0, expirations: Int = 0, removals: Int = 0
    ) {
        self.hits = hits
        self.misses = misses
        self.insertions = insertions
        self.evictions = evictions
        self.expirations = expirations
        self.removals = removals
    }

    /// Lookups: `hits + misses`.
    public var lookups: Int { hits + misses }

    /// The fraction of lookups that hit, or 0 before the first lookup.
    public var hitRatio: Double { lookups == 0 ? 0 : Double(hits) / Double(lookups) }

    public var description: String {
        "hits: \(hits), misses: \(misses), insertions: \(insertions), evictions: \(evictions), "
            + "expirations: \(expirations), removals: \(removals)"
    }
}
