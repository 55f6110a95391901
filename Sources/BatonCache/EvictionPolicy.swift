/// How a ``MemoryCache`` chooses which entry to evict when a limit is reached.
///
/// Thread safety: a plain value; `Sendable`.
public enum EvictionPolicy: Sendable, Hashable, CustomStringConvertible {
    /// SIEVE (Zhang et al., NSDI '24): entries sit in insertion order and a hit only sets the
    /// entry's visited bit. To evict, a hand walks from the oldest entry towards the newest,
    /// clearing visited bits, and removes the first entry whose bit is clear; the hand stays
    /// where it stopped for the next eviction. A write that replaces a live entry's value counts
    /// as a hit, and so does a get-or-insert that returns the value another caller stored while
    /// it computed.
    ///
    /// A hit moves nothing, so lookups run under a shared (read) lock and do not serialise
    /// behind one another. New entries that are never read again are the first to go, which
    /// keeps a one-off scan from flushing the popular entries. The default.
    case sieve

    /// Least recently used: a hit, a write that replaces a live entry's value, or a get-or-insert
    /// that returns the value another caller stored while it computed, moves the entry to the
    /// front, and the entry at the back is evicted. Every hit reorders the list, so
    /// lookups take the shard's exclusive lock. Offered for comparison and for workloads that
    /// depend on strict recency.
    case lru

    /// Window TinyLFU over SIEVE (after Einziger, Friedman and Manes, "TinyLFU", ACM ToS 2017,
    /// as in Caffeine's W-TinyLFU): new entries enter a small window (1% of the shard) in
    /// insertion order; the rest of the room is a SIEVE queue. A count-min sketch counts how
    /// often each key is asked for (hits and misses alike), and forgets gradually by halving
    /// its counts. When the window is full and the cache must evict, the window's oldest entry
    /// meets SIEVE's victim from the main queue, and whichever the sketch has seen asked for
    /// less often is evicted — the newcomer on a tie.
    ///
    /// Why: on skewed (Zipf-like) traffic the entries worth keeping are the frequently asked-for
    /// ones, and frequency is what recency-based policies only guess at. A key read once, as
    /// every key of a scan is, loses its comparison and leaves from the window, so scans do not
    /// flush the main queue; and a key that is popular but was evicted comes back at once, since
    /// the sketch still remembers it. In `baton bench cache` (Zipf α 0.7, 0.9 and 1.1, with
    /// and without scans, capacity 1% and 10% of the keys) it has the highest hit ratio of
    /// Baton's policies, and above libCacheSim's S3-FIFO, ARC and W-TinyLFU on every stream.
    ///
    /// The sketch counts lookups, not writes: an entry written and not yet looked up competes
    /// with a count of zero, and on a tie the newcomer is evicted. So a cache filled by writes
    /// ahead of its reads (prefetching more than the window holds) keeps what it held before,
    /// not what was written last; SIEVE suits such a cache better.
    ///
    /// Cost: a hit still needs only the shard's shared (read) lock, like SIEVE's: it sets the
    /// visited bit (if clear) and raises those of the key's four 4-bit sketch counters that hold
    /// its estimate, all in one cache line, with relaxed atomic loads and stores (none once they
    /// saturate at 15, as a hot key's do), which costs one more hash of the key. A miss counts
    /// too. The sketch takes 8 bytes per entry the shard holds (rounded up to a power of two;
    /// 4 KiB at least); an eviction compares two estimates; aging halves the sketch in one pass
    /// under the exclusive lock, amortised to under two counters per lookup. Concurrent lookups
    /// may each miss the other's raise of a counter, or of the other counter in its byte: the
    /// sketch is an estimate, and the loss only rounds it down.
    case tinyLFU

    public var description: String {
        switch self {
        case .sieve: "SIEVE"
        case .lru: "LRU"
        case .tinyLFU: "TinyLFU"
        }
    }
}
