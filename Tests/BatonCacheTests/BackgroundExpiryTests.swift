import Atomics
import Dispatch
import Foundation
import Testing

@testable import BatonCache

/// Expired entries leave without any lookup: swept by writes, by `removeExpired()` through the
/// timer wheel, and by a background sweep that runs only while something can expire.
@Suite("Background expiry")
struct BackgroundExpiryTests {
    @Test("A write releases its shard's expired entries: count and cost drop, each reported .expired")
    func writesSweep() {
        let clock = ManualClock()
        let cache = MemoryCache<Int, Int>(timeToLive: .seconds(10), shardCount: 1, clock: clock.cacheClock)
        cache.holdBackgroundSweep()
        let log = EvictionLog.attached(to: cache)
        for key in 0..<100 { cache.setValue(key, forKey: key, cost: 2) }
        clock.advance(by: .seconds(10))
        #expect(cache.count == 100)  // nothing has swept yet
        cache[1_000] = 1_000
        #expect(cache.count == 1)
        #expect(cache.totalCost == 1)
        #expect(cache.statistics.expirations == 100)
        #expect(Set(log.keys) == Set(0..<100))
        #expect(Set(log.reasons) == [.expired])
        #expect(cache.invariantViolations().isEmpty)
    }

    /// A write sweeps its shard when the spacing has passed since the last write that swept (the
    /// first write that can expire anything sweeps at once), not on every write.
    @Test("A write sweeps once the spacing since the last sweep has passed, exactly then, and not before")
    func writesSweepOnceASpacing() {
        let clock = ManualClock()
        let cache = MemoryCache<Int, Int>(shardCount: 1, clock: clock.cacheClock)
        cache.holdBackgroundSweep()
        let spacing = Duration.nanoseconds(writeSweepSpacing)
        clock.advance(by: .seconds(1))
        cache.setValue(0, forKey: 0, timeToLive: .nanoseconds(1))  // sweeps: the next one is due a spacing on
        clock.advance(by: spacing - .nanoseconds(1))
        cache[1] = 1  // 0 has expired, but the spacing has not passed
        #expect(cache.count == 2 && cache.statistics.expirations == 0)
        clock.advance(by: .nanoseconds(1))
        cache[2] = 2  // exactly a spacing after the last sweep
        #expect(cache.count == 2 && cache.statistics.expirations == 1)
        cache.setValue(3, forKey: 3, timeToLive: .nanoseconds(1))
        clock.advance(by: .nanoseconds(2))
        cache[4] = 4  // 3 has expired; the last sweep was two nanoseconds ago
        #expect(cache.count == 4 && cache.statistics.expirations == 1)
        #expect(cache.invariantViolations().isEmpty)
    }

    @Test("removeExpired releases exactly the expired entries, whatever their lifetimes")
    func removeExpiredWithMixedLifetimes() {
        let clock = ManualClock()
        let cache = MemoryCache<Int, Int>(shardCount: 4, clock: clock.cacheClock)
        cache.holdBackgroundSweep()
        var random = Xorshift(seed: 42)
        var lifetimes: [Int: Int64] = [:]  // key → lifetime in milliseconds
        for key in 0..<2_000 {
            // From a millisecond to a few days, so every level of the wheel is used.
            let milliseconds = Int64(1) << Int64(random.next() % 29)
            lifetimes[key] = milliseconds
            cache.setValue(key, forKey: key, timeToLive: .milliseconds(milliseconds))
        }
        var elapsed: Int64 = 0
        for step in [1, 7, 100, 900, 5_000, 60_000, 600_000, 3_600_000, 86_400_000, 300_000_000] as [Int64] {
            clock.advance(by: .milliseconds(step))
            elapsed += step
            cache.removeExpired()
            let live = lifetimes.values.filter { $0 > elapsed }.count
            #expect(cache.count == live, "after \(elapsed) ms")
            #expect(cache.statistics.expirations == 2_000 - live)
            #expect(cache.invariantViolations().isEmpty)
        }
        #expect(cache.count == 0)
    }

    @Test("An idle entry read since it was scheduled is kept by a sweep and released when idle")
    func idleEntriesAreCheckedAgain() {
        let clock = ManualClock()
        let cache = MemoryCache<String, Int>(timeToIdle: .seconds(10), clock: clock.cacheClock)
        cache.holdBackgroundSweep()
        cache["read"] = 1
        cache["unread"] = 2
        clock.advance(by: .seconds(5))
        #expect(cache["read"] == 1)
        clock.advance(by: .seconds(7))  // 12 s: "unread" idle for 12, "read" for 7
        cache.removeExpired()
        #expect(cache.count == 1)
        #expect(cache.peek("read") == 1)
        clock.advance(by: .seconds(3))  // "read" idle for 10
        cache.removeExpired()
        #expect(cache.count == 0)
        #expect(cache.invariantViolations().isEmpty)
    }

    @Test("The background sweep releases expired entries with no call into the cache", .timeLimit(.minutes(1)))
    func backgroundSweepReleases() async {
        let clock = ManualClock()
        let cache = MemoryCache<Int, Int>(timeToLive: .seconds(1), clock: clock.cacheClock)
        let expired = DispatchSemaphore(value: 0)
        cache.onEviction { _, _, reason in
            if reason == .expired { expired.signal() }
        }
        for key in 0..<50 { cache[key] = key }
        #expect(cache.isSweepScheduled)
        clock.advance(by: .seconds(1))
        #expect(await wait(for: expired, count: 50))
        #expect(cache.count == 0)
        #expect(cache.statistics.expirations == 50)
        // With nothing left to expire, the sweep stops scheduling itself.
        #expect(await waitOnThread { eventually { !cache.isSweepScheduled } })
    }

    /// An idle limit alone makes every entry one that can expire: the sweep starts with the
    /// first write, releases the entries that went idle with no call into the cache, and stops
    /// once nothing is left.
    @Test("A cache with only an idle limit sweeps in the background", .timeLimit(.minutes(1)))
    func backgroundSweepWithOnlyAnIdleLimit() async {
        let clock = ManualClock()
        let cache = MemoryCache<Int, Int>(timeToIdle: .seconds(1), clock: clock.cacheClock)
        let idle = DispatchSemaphore(value: 0)
        cache.onEviction { _, _, reason in
            if reason == .expired { idle.signal() }
        }
        for key in 0..<50 { cache[key] = key }
        #expect(cache.isSweepScheduled)
        // Without a sweep, nothing would release them: no need to wait for it.
        guard cache.isSweepScheduled else { return }
        clock.advance(by: .seconds(1))
        #expect(await wait(for: idle, count: 50))
        #expect(cache.count == 0)
        #expect(cache.statistics.expirations == 50)
        #expect(await waitOnThread { eventually { !cache.isSweepScheduled } })
    }

    /// Real time and a 1 ms lifetime, for a little over two sweeps: the background sweep
    /// races writers and readers on every shard. Then, with the threads stopped and no write
    /// left to sweep, the background sweep alone must release everything, and every entry
    /// must be accounted for exactly once.
    @Test("The background sweep races writers and readers and loses nothing", .timeLimit(.minutes(1)))
    func backgroundSweepRacesOperations() async {
        let cache = MemoryCache<Int, Int>(countLimit: 500, timeToLive: .milliseconds(1), shardCount: 8)
        let handled = ManagedAtomic(0)
        cache.onEviction { key, value, _ in
            precondition(value == key &* 3, "handler got \(value) for \(key)")
            handled.wrappingIncrement(ordering: .relaxed)
        }
        let writes = ManagedAtomic(0)
        let end = ContinuousClock.now + .milliseconds(2_500)
        let bodies: [@Sendable () -> Void] = (0..<2).map { thread in
            {
                var random = Xorshift(seed: UInt64(thread + 11))
                while ContinuousClock.now < end {
                    for _ in 0..<256 {
                        let key = Int(random.next() % 2_000)
                        if random.next() % 3 == 0 {
                            cache.setValue(
                                key &* 3, forKey: key, timeToLive: .milliseconds(Int64(random.next() % 50) + 1))
                            writes.wrappingIncrement(ordering: .relaxed)
                        } else if let value = cache[key], value != key &* 3 {
                            preconditionFailure("read \(value) for \(key)")
                        }
                    }
                }
            }
        }
        #expect(await raceThreads(bodies))
        // Counters and handlers follow the release of an entry's room, so wait for all three.
        let settled = await waitOnThread {
            eventually {
                let stats = cache.statistics
                return cache.count == 0 && stats.insertions == stats.evictions + stats.expirations + stats.removals
                    && handled.load(ordering: .relaxed) == stats.insertions
            }
        }
        #expect(settled, "count \(cache.count), \(cache.statistics), handled \(handled.load(ordering: .relaxed))")
        #expect(cache.totalCost == 0)
        #expect(cache.statistics.insertions == writes.load(ordering: .relaxed))
        #expect(cache.invariantViolations().isEmpty)
    }

    @Test("A cache with nothing that can expire never schedules a sweep")
    func noSweepWithoutExpiry() {
        let cache = MemoryCache<Int, Int>(countLimit: 100)
        for key in 0..<200 { cache[key] = key }
        _ = cache[150]
        cache.removeValue(forKey: 199)
        #expect(!cache.isSweepScheduled)
        // An entry with a lifetime of its own is what starts one.
        cache.setValue(1, forKey: 1, timeToLive: .seconds(60))
        #expect(cache.isSweepScheduled)
    }

    @Test("A scheduled sweep does not keep the cache alive")
    func sweepHoldsTheCacheWeakly() {
        weak var weakCache: MemoryCache<Int, Int>?
        do {
            let cache = MemoryCache<Int, Int>(timeToLive: .seconds(60))
            cache[1] = 1
            #expect(cache.isSweepScheduled)
            weakCache = cache
        }
        #expect(weakCache == nil)
    }
}

/// Polls `condition` every 10 ms for up to 30 s; returns whether it became true.
func eventually(_ condition: () -> Bool) -> Bool {
    for _ in 0..<3_000 {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}
