import Testing

@testable import BatonCache

@Suite("Limits")
struct MemoryCacheLimitTests {
    /// A write that empties its own shard without making room gives back the room it took
    /// from the entries it evicted (here one entry, of cost 0) before room is made in another
    /// shard: the budget's count then matches the entries held.
    @Test("A write that evicts its whole shard and still needs room gives back what it evicted first")
    func roomHeldIsGivenBackWhenTheShardRunsOut() {
        let cache = MemoryCache<Int, Int>(costLimit: 10, shardCount: 2)
        #expect(cache.shardMask == 1)
        let inShard = { (shard: Int) in (0...).first { $0.hashValue & 1 == shard }! }
        let first = inShard(0)
        let second = inShard(1)
        let third = ((first + 1)...).first { $0.hashValue & 1 == 0 }!
        cache.setValue(0, forKey: first, cost: 0)
        cache.setValue(0, forKey: second, cost: 10)
        cache.setValue(0, forKey: third, cost: 10)  // evicts `first`, then `second` in the other shard
        #expect(cache.peek(third) == 0 && cache.peek(first) == nil && cache.peek(second) == nil)
        #expect(cache.count == 1 && cache.totalCost == 10)
        #expect(cache.invariantViolations().isEmpty)
    }

    /// Lowering a limit evicts for that limit: an entry that can expire but has not is reported
    /// `.count`, not `.expired`.
    @Test("Evictions for a lowered limit are reported .count on a cache whose entries can expire")
    func loweringALimitReportsCountOnACacheWithALifetime() {
        let clock = ManualClock()
        let cache = MemoryCache<Int, Int>(countLimit: 10, timeToLive: .seconds(60), clock: clock.cacheClock)
        let log = EvictionLog.attached(to: cache)
        for key in 0..<10 { cache[key] = key }
        cache.countLimit = 4
        #expect(log.reasons == Array(repeating: .count, count: 6))
    }

    @Test(
        "countLimit is never exceeded, and each write beyond it evicts exactly one entry",
        arguments: [EvictionPolicy.sieve, .lru, .tinyLFU], [1, 4, 16])
    func countLimit(policy: EvictionPolicy, shards: Int) {
        let cache = MemoryCache<Int, Int>(countLimit: 100, policy: policy, shardCount: shards)
        let log = EvictionLog.attached(to: cache)
        for key in 0..<1_000 {
            cache[key] = key
            #expect(cache.count == min(key + 1, 100))
            #expect(cache[key] == key, "the value just written is readable")
        }
        #expect(log.entries.count == 900)
        #expect(log.reasons.allSatisfy { $0 == .count })
        let stats = cache.statistics
        #expect(stats.insertions == 1_000)
        #expect(stats.evictions == 900)
        #expect(stats.insertions - stats.evictions - stats.expirations - stats.removals == cache.count)
        #expect(cache.invariantViolations().isEmpty)
    }

    @Test("a small countLimit spread over many shards is still exact for the whole cache")
    func countLimitAcrossShards() {
        let cache = MemoryCache<Int, Int>(countLimit: 3, shardCount: 16)
        for key in 0..<200 {
            cache[key] = key
            #expect(cache.count == min(key + 1, 3))
        }
        var present = 0
        for key in 0..<200 where cache[key] != nil { present += 1 }
        #expect(present == 3)
        #expect(cache.invariantViolations().isEmpty)
    }

    @Test(
        "costLimit is never exceeded; entries are evicted only as far as needed",
        arguments: [EvictionPolicy.sieve, .lru])
    func costLimit(policy: EvictionPolicy) {
        let cache = MemoryCache<Int, String>(costLimit: 100, policy: policy, shardCount: 1)
        cache.setValue("a", forKey: 1, cost: 40)
        cache.setValue("b", forKey: 2, cost: 40)
        cache.setValue("c", forKey: 3, cost: 20)
        #expect(cache.totalCost == 100)
        #expect(cache.count == 3)
        // 30 more: the oldest (40) must go, and nothing else.
        cache.setValue("d", forKey: 4, cost: 30)
        #expect(cache.totalCost == 90)
        #expect(cache[1] == nil)
        #expect(cache[2] == "b" && cache[3] == "c" && cache[4] == "d")

        var generator = SystemRandomNumberGenerator()
        for key in 10..<2_000 {
            cache.setValue("v", forKey: key, cost: Int.random(in: 0...60, using: &generator))
            #expect(cache.totalCost <= 100)
        }
        #expect(cache.invariantViolations().isEmpty)
    }

    @Test("an entry whose cost alone exceeds costLimit is not stored and is reported as evicted")
    func oversizedEntry() {
        let cache = MemoryCache<String, Int>(costLimit: 10)
        let log = EvictionLog.attached(to: cache)
        cache.setValue(1, forKey: "small", cost: 5)
        cache.setValue(2, forKey: "big", cost: 11)
        #expect(cache["big"] == nil)
        #expect(cache["small"] == 1)
        #expect(cache.totalCost == 5)
        #expect(log.entries.count == 1)
        #expect(log.entries.first?.key == "big" && log.entries.first?.value == 2 && log.entries.first?.reason == .cost)

        // Writing an oversized value for a stored key removes the old value too: the key's
        // latest value is the one that did not fit.
        cache.setValue(3, forKey: "small", cost: 50)
        #expect(cache["small"] == nil)
        #expect(cache.count == 0 && cache.totalCost == 0)
        #expect(log.reasons == [.cost, .replaced, .cost])
        let stats = cache.statistics
        #expect(stats.insertions == 3 && stats.evictions == 2 && stats.removals == 1)
    }

    @Test("a countLimit of 0 stores nothing")
    func zeroCountLimit() {
        let cache = MemoryCache<Int, Int>(countLimit: 0)
        cache[1] = 1
        #expect(cache[1] == nil)
        #expect(cache.count == 0)
        #expect(cache.statistics.evictions == 1)
    }

    @Test(
        "timeToLive: an entry is returned until exactly its lifetime has passed, never after",
        arguments: [EvictionPolicy.sieve, .lru, .tinyLFU])
    func timeToLive(policy: EvictionPolicy) {
        let clock = ManualClock()
        let cache = MemoryCache<String, Int>(timeToLive: .seconds(10), policy: policy, clock: clock.cacheClock)
        cache.holdBackgroundSweep()
        let log = EvictionLog.attached(to: cache)
        cache["a"] = 1
        clock.advance(by: .seconds(5))
        cache["b"] = 2
        #expect(cache["a"] == 1, "reads do not extend a time to live")
        clock.advance(by: .seconds(5) - .nanoseconds(1))
        #expect(cache["a"] == 1)
        clock.advance(by: .nanoseconds(1))
        #expect(cache["a"] == nil)
        #expect(cache["b"] == 2)
        #expect(cache.count == 1, "the expired entry met by the lookup was removed")
        #expect(log.entries.map(\.key) == ["a"] && log.reasons == [.expired])
        clock.advance(by: .seconds(5))
        #expect(cache.removeValue(forKey: "b") == nil, "an expired entry is not returned by removeValue either")
        let stats = cache.statistics
        #expect(stats.expirations == 2)
        #expect(stats.hits == 3 && stats.misses == 1)
        #expect(cache.count == 0)
    }

    @Test(
        "timeToIdle: each read extends an entry's life; an unread entry expires",
        arguments: [EvictionPolicy.sieve, .lru, .tinyLFU])
    func timeToIdle(policy: EvictionPolicy) {
        let clock = ManualClock()
        let cache = MemoryCache<String, Int>(timeToIdle: .seconds(10), policy: policy, clock: clock.cacheClock)
        cache.holdBackgroundSweep()
        cache["read"] = 1
        cache["unread"] = 2
        for _ in 0..<5 {
            clock.advance(by: .seconds(9))
            #expect(cache["read"] == 1)
        }
        #expect(cache["unread"] == nil)
        clock.advance(by: .seconds(10))
        #expect(cache["read"] == nil)
        #expect(cache.statistics.expirations == 2)
    }

    /// "After it was last read or written": a write to a live entry restarts its idle clock as a
    /// read does, whichever policy keeps it.
    @Test(
        "timeToIdle: rewriting a live entry restarts its idle clock",
        arguments: [EvictionPolicy.sieve, .lru, .tinyLFU])
    func rewritingRestartsTheIdleClock(policy: EvictionPolicy) {
        let clock = ManualClock()
        let cache = MemoryCache<String, Int>(timeToIdle: .seconds(10), policy: policy, clock: clock.cacheClock)
        cache.holdBackgroundSweep()
        cache["rewritten"] = 1
        for value in 2...4 {
            clock.advance(by: .seconds(9))
            cache["rewritten"] = value  // written, never read
        }
        clock.advance(by: .seconds(9))  // 36 s after the first write, 9 s after the last
        #expect(cache.statistics.expirations == 0)
        #expect(cache["rewritten"] == 4)
        clock.advance(by: .seconds(10))
        #expect(cache["rewritten"] == nil)
        #expect(cache.statistics.expirations == 1)
    }

    @Test("timeToLive and timeToIdle together: whichever runs out first")
    func bothTimeLimits() {
        let clock = ManualClock()
        let cache = MemoryCache<Int, Int>(timeToLive: .seconds(20), timeToIdle: .seconds(5), clock: clock.cacheClock)
        cache.holdBackgroundSweep()
        cache[1] = 1
        for _ in 0..<4 {
            clock.advance(by: .seconds(4))
            #expect(cache[1] == 1)
        }
        clock.advance(by: .seconds(4))  // 20 s since the write, 4 s since the last read
        #expect(cache[1] == nil)
    }

    @Test("expired entries are removed by removeExpired and by a write's sweep")
    func removeExpiredAndSweepOnWrite() {
        let clock = ManualClock()
        let cache = MemoryCache<Int, Int>(
            countLimit: 4, timeToLive: .seconds(10), shardCount: 1, clock: clock.cacheClock)
        cache.holdBackgroundSweep()
        let log = EvictionLog.attached(to: cache)
        cache[1] = 1
        cache[2] = 2
        clock.advance(by: .seconds(6))
        cache[3] = 3
        cache[4] = 4
        clock.advance(by: .seconds(5))  // 1 and 2 have expired, 3 and 4 have not
        #expect(cache.count == 4)
        cache.removeExpired()
        #expect(log.entries.map(\.key) == [1, 2] && log.reasons == [.expired, .expired])
        #expect(cache.count == 2)
        clock.advance(by: .seconds(5))  // 3 and 4 have expired; a write sweeps them
        cache[5] = 5
        #expect(log.entries.map(\.key) == [1, 2, 3, 4] && Set(log.reasons) == [.expired])
        #expect(cache.count == 1)
        #expect(cache[5] == 5)
    }

    /// Between two sweeps (a write sweeps at most every 134 ms of clock time), an expired
    /// entry is still there for the policy to meet: SIEVE takes it although it is visited.
    @Test("an expired entry not yet swept is preferred by eviction")
    func evictExpiredFirst() {
        let clock = ManualClock()
        let cache = MemoryCache<Int, Int>(countLimit: 4, shardCount: 1, clock: clock.cacheClock)
        cache.holdBackgroundSweep()
        let log = EvictionLog.attached(to: cache)
        cache.setValue(1, forKey: 1, timeToLive: .milliseconds(50))
        for key in 2...4 { cache[key] = key }
        _ = cache[1]  // visited: SIEVE would pass over it if it were live
        clock.advance(by: .milliseconds(60))
        cache[5] = 5
        #expect(log.keys == [1])
        #expect(log.reasons == [.expired])
        #expect(cache[2] == 2 && cache[5] == 5)
    }

    @Test(
        "trim(toCount:) and trim(toCost:) evict down to the target and no further",
        arguments: [1, 8])
    func trim(shards: Int) {
        let cache = MemoryCache<Int, Int>(shardCount: shards)
        for key in 0..<1_000 { cache.setValue(key, forKey: key, cost: 2) }
        cache.trim(toCount: 300)
        #expect(cache.count == 300)
        #expect(cache.totalCost == 600)
        cache.trim(toCost: 101)
        #expect(cache.totalCost == 100)
        #expect(cache.count == 50)
        cache.trim(toCount: 0)
        #expect(cache.count == 0)
        let stats = cache.statistics
        #expect(stats.evictions == 1_000)
        #expect(cache.invariantViolations().isEmpty)
    }

    /// Trimming, and lowering a live limit, visit the shards in turn and take a share of the
    /// excess from each: every shard gives some, and what each gives is its own next victims
    /// (with no reads, its oldest entries, under both policies that evict the oldest first).
    @Test(
        "trim and a lowered countLimit take a share from every shard, each shard's oldest entries",
        arguments: [EvictionPolicy.lru, .sieve], [false, true])
    func trimmingSharesTheExcessAmongShards(policy: EvictionPolicy, byLoweringTheLimit: Bool) {
        let shardCount = 4
        let cache = MemoryCache<Int, Int>(countLimit: 400, policy: policy, shardCount: shardCount)
        for key in 0..<400 { cache[key] = key }
        // The shard of a key, as the cache picks it: the low bits of its hash.
        let byShard = Dictionary(grouping: 0..<400) { $0.hashValue & (shardCount - 1) }
        if byLoweringTheLimit {
            cache.countLimit = 200
        } else {
            cache.trim(toCount: 200)
        }
        #expect(cache.count == 200)
        for (shard, keys) in byShard.sorted(by: { $0.key < $1.key }) {
            let kept = keys.filter { cache.peek($0) != nil }  // keys ascending: oldest first
            #expect(kept.count < keys.count, "shard \(shard) gave none of its \(keys.count) entries")
            #expect(kept == Array(keys.suffix(kept.count)), "shard \(shard) kept \(kept), not its newest")
        }
        #expect(cache.invariantViolations().isEmpty)
    }

    @Test("removeValue, removeAll and replacement report their reasons and keep count and cost right")
    func removals() {
        let cache = MemoryCache<Int, String>(countLimit: 10, costLimit: 100)
        let log = EvictionLog.attached(to: cache)
        cache.setValue("one", forKey: 1, cost: 10)
        cache.setValue("uno", forKey: 1, cost: 30)
        #expect(cache.count == 1 && cache.totalCost == 30)
        #expect(cache.removeValue(forKey: 1) == "uno")
        #expect(cache.removeValue(forKey: 1) == nil)
        for key in 2..<6 { cache[key] = "\(key)" }
        cache[2] = nil
        #expect(cache.peek(2) == nil && cache.count == 3 && log.keys.last == 2)
        cache.removeAll()
        #expect(cache.count == 0 && cache.totalCost == 0)
        #expect(log.entries.first?.value == "one" && log.entries.first?.reason == .replaced)
        #expect(log.reasons.dropFirst().allSatisfy { $0 == .removed })
        #expect(log.entries.count == 6)
        let stats = cache.statistics
        #expect(stats.removals == 6)
        #expect(stats.insertions - stats.evictions - stats.expirations - stats.removals == 0)
        #expect(cache.invariantViolations().isEmpty)
    }

    @Test("a negative countLimit stops the program with a message")
    func negativeCountLimit() async {
        await #expect(processExitsWith: .failure) {
            _ = MemoryCache<Int, Int>(countLimit: -1)
        }
    }

    @Test("a negative costLimit stops the program with a message")
    func negativeCostLimit() async {
        await #expect(processExitsWith: .failure) {
            _ = MemoryCache<Int, Int>(costLimit: -5)
        }
    }

    @Test("a negative cost stops the program with a message")
    func negativeCost() async {
        await #expect(processExitsWith: .failure) {
            MemoryCache<Int, Int>().setValue(1, forKey: 1, cost: -1)
        }
    }
}
