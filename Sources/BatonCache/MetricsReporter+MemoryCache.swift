#if Metrics
import BatonLocks

extension MetricsReporter {
    /// Samples a cache's ``MemoryCache/statistics``, ``MemoryCache/count`` and
    /// ``MemoryCache/totalCost``, with a `cache` dimension holding `name`:
    ///
    /// | metric | kind | what |
    /// |---|---|---|
    /// | `baton_cache_hits_total` | counter | lookups that found a live entry |
    /// | `baton_cache_misses_total` | counter | lookups that found none |
    /// | `baton_cache_insertions_total` | counter | values stored |
    /// | `baton_cache_evictions_total{reason}` | counter | entries evicted: `reason` is `count` or `cost`, the limit that evicted them |
    /// | `baton_cache_expirations_total` | counter | entries that expired (time to live or to idle) |
    /// | `baton_cache_removals_total` | counter | entries removed or replaced by a caller |
    /// | `baton_cache_entries` | gauge | entries stored |
    /// | `baton_cache_cost` | gauge | the entries' total cost |
    ///
    /// The cache counts all of these whether or not it is watched, with a relaxed atomic add on
    /// a counter striped by thread: watching it adds nothing to a lookup or a store.
    ///
    /// - Precondition: no other cache is watched under `name`.
    public func watch<Key, Value>(_ cache: MemoryCache<Key, Value>, name: String) {
        watch(kind: "cache", name: name) { [weak cache] sample in
            guard let cache else { return false }
            let cacheName = ("cache", name)
            let statistics = cache.statistics
            let costEvictions = cache.costEvictions
            sample.count("baton_cache_hits_total", [cacheName], statistics.hits)
            sample.count("baton_cache_misses_total", [cacheName], statistics.misses)
            sample.count("baton_cache_insertions_total", [cacheName], statistics.insertions)
            sample.count(
                "baton_cache_evictions_total", [cacheName, ("reason", "count")], statistics.evictions - costEvictions)
            sample.count("baton_cache_evictions_total", [cacheName, ("reason", "cost")], costEvictions)
            sample.count("baton_cache_expirations_total", [cacheName], statistics.expirations)
            sample.count("baton_cache_removals_total", [cacheName], statistics.removals)
            sample.gauge("baton_cache_entries", [cacheName], cache.count)
            sample.gauge("baton_cache_cost", [cacheName], cache.totalCost)
            return true
        }
    }
}
#endif
