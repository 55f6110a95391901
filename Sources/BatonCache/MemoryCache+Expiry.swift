import Atomics
import BatonInternals
import Dispatch

/// Releasing expired entries: on demand, and by a background sweep while any entry can expire.
extension MemoryCache {
    /// Removes every expired entry now (reason `.expired`). Expired entries are never
    /// returned in any case, and the cache releases them by itself within about a second
    /// (see "Expiry" in ``MemoryCache``); this releases them at once, e.g. before reading
    /// ``count``.
    ///
    /// - Complexity: O(expired entries + shards): each shard finds its expired entries
    ///   through its timer wheel, without scanning the others.
    public func removeExpired() {
        guard expiry.isEnabled || lifetimesInUse.load(ordering: .relaxed) else { return }
        let now = clock.nanoseconds()
        for shard in shards {
            var evicted = EvictionBatch<Key, Value>()
            shard.withWriteLock { $0.removeExpired(now: now, evicted: &evicted) }
            deliver(evicted)
        }
    }

    // MARK: Background expiry

    /// How often the background sweep runs while any entry can expire.
    static var sweepInterval: Duration { .seconds(1) }

    /// Schedules a sweep ``sweepInterval`` from now, unless one is scheduled. Called after a
    /// write stores an entry that can expire.
    @usableFromInline
    func scheduleSweep() {
        guard sweepScheduled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        let delay = Self.sweepInterval.dispatchInterval
        // Weak: a scheduled sweep must not keep a cache alive; after the cache is gone it
        // finds nothing and ends.
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + delay) { [weak self] in
            self?.sweep()
        }
    }

    /// The background sweep: releases every expired entry, then schedules the next sweep
    /// only if some entry can still expire. A cache with nothing that can expire keeps no
    /// timer and causes no wake-ups.
    func sweep() {
        removeExpired()
        sweepScheduled.store(false, ordering: .sequentiallyConsistent)
        // A write that stored an expiring entry while the flag was still set did not schedule
        // a sweep; looking after clearing the flag catches it (or that write schedules one).
        if shards.contains(where: { !$0.hasNothingToExpire }) { scheduleSweep() }
    }
}
