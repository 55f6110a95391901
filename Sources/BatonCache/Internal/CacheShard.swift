import BatonLocks

/// One shard of a ``MemoryCache``: its state machine behind a reader-writer lock, and its
/// statistics counters.
///
/// Keys are spread over shards by hash, so threads that work on different shards never wait
/// for one another. A SIEVE lookup takes the shared read lock; writes, and LRU lookups, take
/// the exclusive lock.
@usableFromInline
final class CacheShard<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// Guarded by its own `ReadWriteLock`.
    @usableFromInline let state: Protected<ShardStateMachine<Key, Value>>
    @usableFromInline let counters = ShardCounters()

    init(policy: EvictionPolicy, expiry: Expiry, budget: CacheBudget) {
        state = Protected(ShardStateMachine(policy: policy, expiry: expiry, budget: budget))
    }
}
