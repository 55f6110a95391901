import Testing

@testable import BatonCache

/// `peek` and `contains` look without touching: no statistics, no recency, no idle refresh.
@Suite("Quiet lookups")
struct QuietLookupTests {
    @Test("peek and contains see live entries and count neither hits nor misses")
    func quietLookupsCountNothing() {
        let cache = MemoryCache<String, Int>(countLimit: 10)
        cache["a"] = 1
        let before = cache.statistics
        #expect(cache.peek("a") == 1)
        #expect(cache.contains("a"))
        #expect(cache.peek("b") == nil)
        #expect(!cache.contains("b"))
        let after = cache.statistics
        #expect(after.hits == before.hits)
        #expect(after.misses == before.misses)
        _ = cache["a"]
        #expect(cache.statistics.hits == before.hits + 1)  // a real lookup still counts
    }

    /// Three slots: A B C, then a look at A, then D. A lookup would save A (SIEVE's visited
    /// bit, LRU's move to the front) and evict B; a quiet look must leave A the victim.
    @Test("A peek does not save an entry from eviction", arguments: [EvictionPolicy.sieve, .lru])
    func peekDoesNotMarkRecentUse(policy: EvictionPolicy) {
        func victim(looking look: (MemoryCache<String, Int>) -> Void) -> [String] {
            let cache = MemoryCache<String, Int>(countLimit: 3, policy: policy, shardCount: 1)
            let log = EvictionLog.attached(to: cache)
            cache["A"] = 1
            cache["B"] = 2
            cache["C"] = 3
            look(cache)
            cache["D"] = 4
            return log.keys
        }
        #expect(victim { _ = $0.value(forKey: "A") } == ["B"])
        #expect(victim { _ = $0.peek("A") } == ["A"])
        #expect(victim { _ = $0.contains("A") } == ["A"])
    }

    @Test("A peek does not refresh an entry's idle time", arguments: [EvictionPolicy.sieve, .lru, .tinyLFU])
    func peekDoesNotRefreshIdleTime(policy: EvictionPolicy) {
        let clock = ManualClock()
        let cache = MemoryCache<String, Int>(timeToIdle: .seconds(10), policy: policy, clock: clock.cacheClock)
        cache.holdBackgroundSweep()
        cache["quiet"] = 1
        cache["read"] = 2
        clock.advance(by: .seconds(6))
        #expect(cache.peek("quiet") == 1)
        #expect(cache["read"] == 2)  // a lookup refreshes
        clock.advance(by: .seconds(6))  // 12 s after the write, 6 s after the lookup
        #expect(cache.peek("quiet") == nil)
        #expect(!cache.contains("quiet"))
        #expect(cache.peek("read") == 2)
    }

    @Test("An expired entry reads as absent and is left for a lookup or removeExpired to remove")
    func expiredEntriesReadAsAbsent() {
        let clock = ManualClock()
        let cache = MemoryCache<String, Int>(timeToLive: .seconds(5), clock: clock.cacheClock)
        cache.holdBackgroundSweep()
        cache["a"] = 1
        clock.advance(by: .seconds(5))
        #expect(cache.peek("a") == nil)
        #expect(!cache.contains("a"))
        #expect(cache.count == 1)  // still held: peeking removes nothing
        #expect(cache.statistics.expirations == 0)
        #expect(cache["a"] == nil)  // a lookup removes it
        #expect(cache.count == 0)
        #expect(cache.statistics.expirations == 1)
    }
}

@Suite("Cache statistics")
struct CacheStatisticsTests {
    @Test("hitRatio is hits over lookups, 0 before the first lookup; peeks do not move it")
    func hitRatio() {
        let cache = MemoryCache<String, Int>(countLimit: 10)
        #expect(cache.statistics.hitRatio == 0)
        cache["a"] = 1
        _ = cache["a"]
        _ = cache["a"]
        _ = cache["a"]
        _ = cache["b"]
        #expect(cache.statistics.lookups == 4)
        #expect(cache.statistics.hitRatio == 0.75)
        _ = cache.peek("b")
        _ = cache.contains("a")
        #expect(cache.statistics.hitRatio == 0.75)
        _ = cache.value(forKey: "c") { 3 }  // a miss, then stored
        #expect(cache.statistics.hitRatio == 0.6)
    }

    @Test("a snapshot made by hand starts every counter at zero, and each argument sets its own counter")
    func madeByHand() {
        let fields: [KeyPath<CacheStatistics, Int>] = [
            \.hits, \.misses, \.insertions, \.evictions, \.expirations, \.removals,
        ]
        func counters(_ statistics: CacheStatistics) -> [Int] { fields.map { statistics[keyPath: $0] } }
        #expect(counters(CacheStatistics()) == [0, 0, 0, 0, 0, 0])
        #expect(CacheStatistics().lookups == 0 && CacheStatistics().hitRatio == 0)
        let made = CacheStatistics(hits: 1, misses: 2, insertions: 3, evictions: 4, expirations: 5, removals: 6)
        #expect(counters(made) == [1, 2, 3, 4, 5, 6])
        #expect(counters(CacheStatistics(misses: 2)) == [0, 2, 0, 0, 0, 0])
    }
}
