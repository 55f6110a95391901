import BatonLocks

/// One shard of a ``MemoryCache``: its state machine behind a reader-writer lock, and its
/// statistics counters.
///
/// Keys are spread over shards by hash, so threads that work on different shards never wait
/// for one another. A SIEVE lookup takes the shared read lock; writes, and LRU lookups, take
/// the exclusive lock.
///
/// The state is a stored property read in place by the methods below: passed to a closure as
/// a value (as `Protected.read` does), the struct — a dictionary, an array and three
/// references — would be copied on every lookup, six reference-count operations on cache
/// lines that every reader shares.
@usableFromInline
final class CacheShard<Key: Hashable & Sendable, Value: Sendable> {
    @usableFromInline let lock = ReadWriteLock()
    /// Guarded by `lock`. The lock, not the runtime's exclusivity check, keeps accesses apart.
    @exclusivity(unchecked) @usableFromInline var state: ShardStateMachine<Key, Value>
    @usableFromInline let counters = ShardCounters()

    init(policy: EvictionPolicy, expiry: Expiry, budget: CacheBudget) {
        state = ShardStateMachine(policy: policy, expiry: expiry, budget: budget)
    }

    /// A lookup that needs only the read lock (see ``ShardStateMachine/lookupShared(_:now:)``).
    @inlinable
    func lookupShared(_ key: Key, now: Int64) -> Lookup<Value> {
        lock.withReadLock { state.lookupShared(key, now: now) }
    }

    /// Runs `body` on the state under the write lock.
    @inlinable
    func withWriteLock<Result>(_ body: (inout ShardStateMachine<Key, Value>) -> Result) -> Result {
        lock.withWriteLock { body(&state) }
    }

    /// Structural problems in the shard (for tests), with its count and total cost.
    func check() -> (problems: [String], count: Int, cost: Int) {
        lock.withReadLock { (state.invariantViolations(), state.count, state.totalCost) }
    }
}

// Every access to `state` goes through `lock`; the other properties are Sendable and never
// change. Sharing a shard shares its keys and values, which are Sendable.
extension CacheShard: @unchecked Sendable {}
