import Atomics
import BatonLocks

/// One shard of a ``MemoryCache``: its state machine behind a reader-writer lock.
///
/// Keys are spread over shards by hash, so threads that work on different shards never wait
/// for one another. A SIEVE or TinyLFU lookup takes the shared read lock; writes, and LRU
/// lookups, take the exclusive lock.
///
/// The state is a stored property read in place by the methods below: passed to a closure as
/// a value (as `Protected.read` does), the struct — a dictionary, an array and three
/// references — would be copied on every lookup, six reference-count operations on cache
/// lines that every reader shares.
@usableFromInline
final class CacheShard<Key: Hashable & Sendable, Value: Sendable> {
    // A shared lookup reads `platformLock` and the first fields of `state` (see
    // ``ShardStorage``): they come first, 48 bytes of the object, ahead of `lock`, which the
    // lookup reads only while diagnostics are on.
    /// `lock`'s state handle, kept here so that a lookup finds the lock's word with one load
    /// from this object instead of two (this object's `lock`, then that object's handle).
    @usableFromInline let platformLock: PlatformRWLock
    /// Guarded by `lock`. The lock, not the runtime's exclusivity check, keeps accesses apart.
    @exclusivity(unchecked) @usableFromInline var state: ShardStorage<Key, Value>
    @usableFromInline let lock: ReadWriteLock

    init(policy: EvictionPolicy, expiry: Expiry, budget: CacheBudget) {
        lock = ReadWriteLock(name: "MemoryCache.shard")
        platformLock = lock.platformLock
        state = ShardStorage(policy: policy, expiry: expiry, budget: budget)
    }

    deinit {
        state.deallocate()
    }

    /// Finds a live entry under the read lock, without reordering anything. A SIEVE hit sets
    /// the visited bit (only if clear, so a hot entry's cache line is not written on every
    /// hit); with `timeToIdle`, it stamps the time of the read. Under TinyLFU every lookup,
    /// hit or miss, is first counted in the sketch.
    ///
    /// `hash` is `key.hashValue`, computed once by the cache.
    ///
    /// It reads the state field by field (`state.index`, `state.visited`) rather than calling a
    /// method of the state: a method needs the whole struct, which the optimiser copies out of
    /// the class first — six reference-count operations on lines every reader shares.
    @inlinable @inline(__always)
    func lookupShared(_ key: Key, hash: Int, now: Int64) -> Lookup<Value> {
        ReadWriteLock.withReadLock(through: platformLock, of: lock) {
            if state.policy == .tinyLFU, let sketch = state.sketch { sketch.increment(hash) }
            let index = state.index
            let bucket = index.find(key, hash: hash)
            guard bucket >= 0 else { return .miss }
            let i = Int(index.slot(at: bucket))
            if state.mayExpire {
                if now >= state.slots[i].expiresAt { return .expired }
                if let lastRead = state.lastRead {
                    if let timeToIdle = state.expiry.timeToIdle, now &- lastRead.load(i) >= timeToIdle {
                        return .expired
                    }
                    lastRead.raise(to: now, at: i)
                }
            }
            let visited = state.visited
            if visited.load(i) == 0 { visited.store(1, at: i) }
            return .hit(index.value(at: bucket))
        }
    }

    /// The live value for `key` under the read lock, touching nothing: no visited bit, no read
    /// time, no reordering. An expired entry reads as absent and stays where it is.
    @inlinable
    func peek(_ key: Key, hash: Int, now: Int64) -> Value? {
        lock.withReadLock {
            let index = state.index
            let bucket = index.find(key, hash: hash)
            guard bucket >= 0 else { return nil }
            if state.mayExpire && state.isExpired(Int(index.slot(at: bucket)), now: now) { return nil }
            return index.value(at: bucket)
        }
    }

    /// Runs `body` on the state under the write lock.
    @inlinable
    func withWriteLock<Result>(_ body: (inout ShardStorage<Key, Value>) -> Result) -> Result {
        lock.withWriteLock { body(&state) }
    }

    /// Whether no entry of this shard can expire, read under the read lock.
    var hasNothingToExpire: Bool {
        lock.withReadLock { state.hasNothingToExpire }
    }
}

// Every access to `state` goes through `lock`; the other properties are Sendable and never
// change. Sharing a shard shares its keys and values, which are Sendable.
extension CacheShard: @unchecked Sendable {}
