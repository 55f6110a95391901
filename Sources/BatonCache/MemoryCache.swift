import Atomics
import BatonInternals
import BatonLocks

/// A thread-safe, in-memory key-value cache with exact count, cost and time limits: the shared
/// cache an app or server would otherwise write by hand around a lock, a queue or `NSCache`.
///
/// ```swift
/// let thumbnails = MemoryCache<URL, Image>(countLimit: 500, costLimit: 64 << 20,
///                                          timeToLive: .seconds(600))
/// thumbnails.setValue(image, forKey: url, cost: image.byteCount)
/// if let cached = thumbnails[url] { show(cached) }
///
/// // Concurrent callers for the same missing key share one download:
/// let image = try await thumbnails.value(forKey: url) { try await download(url) }
/// ```
///
/// **Limits.** Each limit is optional, and each is exact for the whole cache: once a write
/// returns, `count <= countLimit` and `totalCost <= costLimit`, and no thread ever observes
/// more. An entry whose cost alone exceeds `costLimit` is not stored and is reported as
/// evicted (`.cost`). Both limits can be changed on a live cache (``countLimit``,
/// ``costLimit``); lowering one evicts down to it before the setter returns.
///
/// **Expiry.** An entry expires `timeToLive` after it was written — or after its own lifetime,
/// given to ``setValue(_:forKey:cost:timeToLive:)`` — or `timeToIdle` after it was last read.
/// An expired entry is never returned. The cache also releases expired entries by itself,
/// without any lookup: writes to a shard sweep it every 134 ms or so of clock time, and while
/// any entry can expire a background sweep runs once a second, so an expired entry leaves
/// `count` and `totalCost` (reported to ``onEviction(_:)`` as `.expired`) about a second after
/// it expires at the latest. Each shard keeps its expiring entries in a hierarchical timer
/// wheel, so finding them costs O(1) per entry whatever the mix of lifetimes. A cache with
/// nothing that can expire keeps no timer and causes no wake-ups. The background sweep reads
/// the cache's ``CacheClock`` but runs on real time: with a clock moved by hand, it releases
/// what that clock says has expired, once a real second.
///
/// **Policy.** ``EvictionPolicy/sieve`` by default: a hit only sets a visited bit, so lookups
/// share a read lock, and one-off keys (a scan) leave before popular ones.
/// ``EvictionPolicy/tinyLFU`` keeps SIEVE's shared-lock hits and adds a frequency sketch that
/// admits a new entry only if it is asked for more often than the one it would displace: the
/// higher hit ratio on skewed traffic. ``EvictionPolicy/lru`` is available for comparison.
///
/// **Shards.** Keys are spread by hash over ``shardCount`` shards, each with its own lock and
/// policy state, so threads working on different keys rarely wait for one another. The limits
/// are kept for the whole cache by one shared budget: a write reserves room there before it
/// stores. When the cache is full, the writing shard evicts its own policy's victim (so
/// eviction order is per shard: SIEVE, LRU or TinyLFU within each shard, each TinyLFU shard
/// with its own sketch); only if that shard is empty
/// does the write evict from another shard.
///
/// **Callbacks.** Eviction handlers (``onEviction(_:)``) and completion handlers run after the
/// cache's locks are released, so they may call the cache. Values leaving the cache are
/// released outside its locks too, so a large value's `deinit` never stalls other threads.
///
/// Thread safety: every method may be called from any thread at any time. The class is
/// `Sendable`.
///
/// - Complexity: Lookups, writes and removals are O(1) on average (SIEVE's hand may pass over
///   visited entries, amortised O(1) per eviction). ``removeAll()`` and ``removeExpired()`` are
///   O(n); ``statistics`` sums its per-thread stripes, at most 64.
public final class MemoryCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// How long an entry lives after it is written, or `nil` for no limit; a write may give
    /// its entry a lifetime of its own instead (``setValue(_:forKey:cost:timeToLive:)``).
    public let timeToLive: Duration?
    /// How long an entry lives after it was last read or written, or `nil` for no limit.
    public let timeToIdle: Duration?
    /// How entries are chosen for eviction.
    public let policy: EvictionPolicy
    /// The number of shards keys are spread over (a power of two).
    public let shardCount: Int

    // Every stored property is a constant. What changes inside them is guarded where it lives:
    // each shard's state by that shard's lock, the budget, counters and flags by atomics, a
    // limit change by `limitChange`, the handlers and the flights by their own locks.
    @usableFromInline let shards: [CacheShard<Key, Value>]
    /// The same shards, for the paths every operation takes (see ``ShardTable``).
    @usableFromInline let shardTable: ShardTable<Key, Value>
    @usableFromInline let shardMask: Int
    @usableFromInline let budget: CacheBudget
    @usableFromInline let expiry: Expiry
    @usableFromInline let clock: CacheClock
    @usableFromInline let handlers = EvictionHandlers<Key, Value>()
    /// The statistics, striped by thread.
    @usableFromInline let counters = CacheCounters(
        stripes: ThreadStripe.stripeCount(cores: ProcessorCount.active))
    /// Set once an entry is written with a lifetime of its own: from then on every operation
    /// reads the clock, as with a cache-wide limit. Never cleared. Unmanaged storage rather
    /// than a `ManagedAtomic` object: every lookup reads it, and a plain load beats a call
    /// into the object.
    @usableFromInline let lifetimesInUse = UnsafeAtomic<Bool>.create(false)
    /// Whether a background sweep is scheduled.
    @usableFromInline let sweepScheduled = ManagedAtomic(false)
    let flights = SingleFlight<Key, Value>()
    /// Serializes limit changes (``changeLimit(_:to:)``).
    let limitChange = Lock(name: "MemoryCache.limits")

    /// Creates an empty cache.
    ///
    /// - Parameters:
    ///   - countLimit: The most entries to hold, or `nil` for no limit. Must not be negative.
    ///   - costLimit: The most total cost to hold, or `nil` for no limit. Must not be negative.
    ///     Each entry's cost is given when it is written (1 by default).
    ///   - timeToLive: How long an entry lives after it is written, or `nil`. Must be positive.
    ///   - timeToIdle: How long an entry lives after it was last read or written, or `nil`.
    ///     Must be positive.
    ///   - policy: How to choose entries to evict; SIEVE by default.
    ///   - shardCount: How many shards to spread keys over, rounded up to a power of two. By
    ///     default 32 per core (at most 64), fewer for a small `countLimit` so that each shard
    ///     holds at least 32 entries (128 under TinyLFU) and its policy has something to choose
    ///     from.
    ///   - clock: The time source for `timeToLive` and `timeToIdle`; read only when one is set.
    public init(
        countLimit: Int? = nil, costLimit: Int? = nil,
        timeToLive: Duration? = nil, timeToIdle: Duration? = nil,
        policy: EvictionPolicy = .sieve, shardCount: Int? = nil, clock: CacheClock = .continuous
    ) {
        if let countLimit {
            precondition(countLimit >= 0, "MemoryCache: countLimit must not be negative (got \(countLimit))")
        }
        if let costLimit {
            precondition(costLimit >= 0, "MemoryCache: costLimit must not be negative (got \(costLimit))")
        }
        if let timeToLive {
            precondition(timeToLive > .zero, "MemoryCache: timeToLive must be positive (got \(timeToLive))")
        }
        if let timeToIdle {
            precondition(timeToIdle > .zero, "MemoryCache: timeToIdle must be positive (got \(timeToIdle))")
        }
        if let shardCount {
            precondition(shardCount > 0, "MemoryCache: shardCount must be positive (got \(shardCount))")
        }
        self.timeToLive = timeToLive
        self.timeToIdle = timeToIdle
        self.policy = policy
        self.clock = clock
        let shards = Self.powerOfTwo(
            atLeast: shardCount ?? Self.defaultShardCount(countLimit: countLimit, policy: policy))
        self.shardCount = shards
        shardMask = shards - 1
        let budget = CacheBudget(countLimit: countLimit, costLimit: costLimit)
        let expiry = Expiry(timeToLive: timeToLive?.wholeNanoseconds, timeToIdle: timeToIdle?.wholeNanoseconds)
        self.budget = budget
        self.expiry = expiry
        self.shards = (0..<shards).map { _ in CacheShard(policy: policy, expiry: expiry, budget: budget) }
        shardTable = ShardTable(self.shards)
    }

    deinit {
        shardTable.deallocate()
        counters.deallocate()
        lifetimesInUse.destroy()
    }

    /// 32 shards per core, at most 64, halved while a shard would hold fewer than 32 of
    /// `countLimit` entries (128 under TinyLFU).
    static func defaultShardCount(countLimit: Int?, policy: EvictionPolicy = .sieve) -> Int {
        // Many more shards than cores: on a skewed key stream the hot keys' shards are where
        // threads meet, and each shard's lock word is a cache line they pass back and forth.
        var shards = min(64, powerOfTwo(atLeast: ProcessorCount.active * 32))
        // TinyLFU weighs a newcomer against its own shard's victim, with its own shard's
        // sketch: in small shards, the luck of which popular keys hash together costs hit
        // ratio. In `baton bench cache` at 1,000 entries, 16 shards of 62 lost up to 0.0013 to
        // one shard, 8 of 125 up to 0.0004, 4 of 250 nothing beyond the run-to-run noise.
        let entriesPerShard = policy == .tinyLFU ? 128 : 32
        if let countLimit {
            while shards > 1 && countLimit / shards < entriesPerShard { shards /= 2 }
        }
        return shards
    }

    static func powerOfTwo(atLeast value: Int) -> Int {
        var result = 1
        while result < value { result <<= 1 }
        return result
    }

    /// The clock in nanoseconds if any entry can expire, otherwise 0 without reading it.
    @inlinable
    func currentTime() -> Int64 {
        expiry.isEnabled || lifetimesInUse.load(ordering: .relaxed) ? clock.nanoseconds() : 0
    }

    // MARK: Reading

    /// The value stored for `key`, or `nil` if there is none or it has expired.
    ///
    /// Counts a hit or a miss in ``statistics``. With SIEVE or TinyLFU a hit takes only its
    /// shard's read lock; with LRU it takes the exclusive lock to move the entry to the front.
    /// An expired entry found here is removed (reason `.expired`).
    ///
    /// - Complexity: O(1) on average.
    @inlinable
    public func value(forKey key: Key) -> Value? {
        let now = currentTime()
        // One hash per operation: its low bits pick the shard, the shard's index takes it whole.
        let hash = key.hashValue
        return shardTable.withShard(hash & shardMask) { countedLookup(key, hash: hash, now: now, in: $0) }
    }

    /// Looks `key` (whose `hashValue` is `hash`) up and counts the hit or the miss.
    ///
    /// Always inlined, like ``lookup(_:hash:now:in:)`` and the shard's shared lookup: a read is
    /// then one function with no call to save registers around, about 60 instructions fewer an
    /// operation than when the optimiser left three calls.
    @inlinable @inline(__always)
    func countedLookup(_ key: Key, hash: Int, now: Int64, in shard: CacheShard<Key, Value>) -> Value? {
        switch lookup(key, hash: hash, now: now, in: shard) {
        case .hit(let value):
            counters.increment(.hits)
            return value
        case .miss, .expired:
            counters.increment(.misses)
            return nil
        }
    }

    /// Looks `key` (whose `hashValue` is `hash`) up at time `now` (``currentTime()``) without
    /// counting statistics.
    @inlinable @inline(__always)
    func lookup(_ key: Key, hash: Int, now: Int64, in shard: CacheShard<Key, Value>) -> Lookup<Value> {
        if policy != .lru {
            let found = shard.lookupShared(key, hash: hash, now: now)
            guard case .expired = found else { return found }
        }
        var evicted = EvictionBatch<Key, Value>()
        let found = shard.withWriteLock { $0.lookupExclusive(key, hash: hash, now: now, evicted: &evicted) }
        deliver(evicted)
        return found
    }

    /// The value for `key`; assigning a value stores it with cost 1, assigning `nil` removes it.
    ///
    /// - Complexity: O(1) on average.
    @inlinable
    public subscript(key: Key) -> Value? {
        get { value(forKey: key) }
        set {
            if let newValue {
                setValue(newValue, forKey: key)
            } else {
                removeValue(forKey: key)
            }
        }
    }

    // MARK: Writing

    /// Stores `value` for `key`, replacing any value stored for it (reason `.replaced`).
    ///
    /// If the cache is at a limit, the policy evicts entries (reasons `.count`, `.cost`, or
    /// `.expired` for an expired one) until the new entry fits. If `cost` alone exceeds
    /// `costLimit` (or `countLimit` is 0), nothing is stored: any old value for `key` is removed
    /// and the new one is reported as evicted.
    ///
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: Its key.
    ///   - cost: What the entry counts against `costLimit`, e.g. its size in bytes. Must not be
    ///     negative.
    ///   - timeToLive: How long this entry lives after this write, instead of the cache's
    ///     ``timeToLive`` (shorter or longer); `nil` for the cache's. Must be positive. The
    ///     cache's `timeToIdle`, if any, still applies. An HTTP cache passes each response's
    ///     `max-age` here.
    /// - Complexity: O(1) on average, plus the evictions it causes.
    @inlinable
    public func setValue(_ value: Value, forKey key: Key, cost: Int = 1, timeToLive: Duration? = nil) {
        _ = store(value, forKey: key, cost: cost, timeToLive: timeToLive, ifAbsent: false)
    }

    /// Stores `value` unless `ifAbsent` and a live value is already there; returns the value
    /// now in the cache for `key` (or `value` if it could not be stored).
    @inlinable
    func store(_ value: Value, forKey key: Key, cost: Int, timeToLive: Duration?, ifAbsent: Bool) -> Value {
        precondition(cost >= 0, "MemoryCache: cost must not be negative (got \(cost))")
        var lifetime: Int64?
        if let timeToLive {
            precondition(timeToLive > .zero, "MemoryCache: timeToLive must be positive (got \(timeToLive))")
            lifetime = timeToLive.wholeNanoseconds
            if !lifetimesInUse.load(ordering: .relaxed) { lifetimesInUse.store(true, ordering: .relaxed) }
        }
        let hash = key.hashValue
        let home = hash & shardMask
        let now = currentTime()
        let expiresAt = expiry.deadline(writtenAt: now, lifetime: lifetime)
        return shardTable.withShard(home) { shard in
            store(
                value, forKey: key, hash: hash, cost: cost, expiresAt: expiresAt, now: now, ifAbsent: ifAbsent,
                home: home, in: shard)
        }
    }

    /// ``store(_:forKey:cost:timeToLive:ifAbsent:)`` in `key`'s shard, `home`, borrowed; `hash`
    /// is `key.hashValue`.
    @inlinable
    func store(
        _ value: Value, forKey key: Key, hash: Int, cost: Int, expiresAt: Int64, now: Int64, ifAbsent: Bool,
        home: Int, in shard: CacheShard<Key, Value>
    ) -> Value {
        var evicted = EvictionBatch<Key, Value>()
        defer { deliver(evicted) }
        while true {
            // Checked on every pass: a limit lowered meanwhile may have made the entry one
            // that can never fit, and evicting for it would then never end.
            let tooCostly = cost > budget.costLimit
            if tooCostly || budget.countLimit == 0 {
                if ifAbsent, case .hit(let present) = lookup(key, hash: hash, now: now, in: shard) { return present }
                counters.increment(.insertions)
                _ = shard.withWriteLock {
                    $0.removeValue(forKey: key, hash: hash, now: now, reason: .replaced, evicted: &evicted)
                }
                evicted.append(key, value, tooCostly ? .cost : .count)
                return value
            }
            let outcome = shard.withWriteLock {
                $0.store(
                    key, hash: hash, value, cost: cost, expiresAt: expiresAt, now: now, ifAbsent: ifAbsent,
                    evicted: &evicted)
            }
            switch outcome {
            case .stored:
                counters.increment(.insertions)
                if (expiresAt != .max || expiry.timeToIdle != nil) && !sweepScheduled.load(ordering: .relaxed) {
                    scheduleSweep()
                }
                return value
            case .present(let present):
                return present
            case .needsRoom(let reason):
                evictFromAnotherShard(than: home, reason: reason, now: now, evicted: &evicted)
            }
        }
    }

    /// Evicts one entry from the first non-empty shard after `home`, for a write whose own
    /// shard is empty while the cache is full. Never holds two shard locks at once.
    @usableFromInline
    func evictFromAnotherShard(
        than home: Int, reason: EvictionReason, now: Int64, evicted: inout EvictionBatch<Key, Value>
    ) {
        for offset in 1..<max(shards.count, 2) {
            let shard = shards[(home + offset) & shardMask]
            if shard.withWriteLock({ $0.evictOne(now: now, reason: reason, evicted: &evicted) }) { return }
        }
    }

    // MARK: Removing

    /// Removes the value for `key` and returns it (reason `.removed`), or returns `nil` if
    /// there was none or it had expired (an expired entry is removed with reason `.expired`).
    ///
    /// - Complexity: O(1) on average.
    @inlinable
    @discardableResult
    public func removeValue(forKey key: Key) -> Value? {
        let now = currentTime()
        var evicted = EvictionBatch<Key, Value>()
        let hash = key.hashValue
        let removed = shardTable.withShard(hash & shardMask) { shard in
            shard.withWriteLock { $0.removeValue(forKey: key, hash: hash, now: now, evicted: &evicted) }
        }
        deliver(evicted)
        return removed
    }

    /// Removes every entry (reason `.removed`).
    ///
    /// Each shard is emptied in one step under its lock; the entries are reported and released
    /// after the lock is dropped.
    ///
    /// - Complexity: O(n).
    public func removeAll() {
        for shard in shards {
            let drained = shard.withWriteLock { $0.removeAll() }
            defer { drained.deallocate() }
            counters.increment(.removals, by: drained.count)
            if handlers.isActive.load(ordering: .acquiring) {
                let current = handlers.current
                drained.forEach { key, value, _ in
                    for handler in current { handler(key, value, .removed) }
                }
            }
        }
    }
}
