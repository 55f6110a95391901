/// How a ``MemoryCache`` chooses which entry to evict when a limit is reached.
///
/// Thread safety: a plain value; `Sendable`.
public enum EvictionPolicy: Sendable, Hashable, CustomStringConvertible {
    /// SIEVE (Zhang et al., NSDI '24): entries sit in insertion order and a hit only sets the
    /// entry's visited bit. To evict, a hand walks from the oldest entry towards the newest,
    /// clearing visited bits, and removes the first entry whose bit is clear; the hand stays
    /// where it stopped for the next eviction.
    ///
    /// A hit moves nothing, so lookups run under a shared (read) lock and do not serialise
    /// behind one another. New entries that are never read again are the first to go, which
    /// keeps a one-off scan from flushing the popular entries. The default.
    case sieve

    /// Least recently used: a hit moves the entry to the front, and the entry at the back is
    /// evicted. Every hit reorders the list, so lookups take the shard's exclusive lock.
    /// Offered for comparison and for workloads that depend on strict recency.
    case lru

    public var description: String {
        switch self {
        case .sieve: "SIEVE"
        case .lru: "LRU"
        }
    }
}
