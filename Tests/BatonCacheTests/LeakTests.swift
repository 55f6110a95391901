import BatonLocks
import BatonTestSupport
import Foundation
import Testing

@testable import BatonCache

/// Every key and value leaves memory when it leaves the cache: evicted by count or cost,
/// expired (on a manual clock, by lookups, `removeExpired()` and the background sweep),
/// removed, replaced, dropped by `removeAll()` or `trim`, and when the cache itself goes, even
/// with a background sweep scheduled. 100,000 entries of each kind, counted by deinit, with
/// exact counts.
///
/// A cache hands an entry it lets go of to its eviction handlers and drops it before the call
/// returns, so counts are checked at once, except for the background sweep, which the tests
/// wait for with a bounded poll on a thread of their own.
@Suite(.offTheCooperativePool) struct LeakTests {
    /// 100,000 of each kind; a tenth under a sanitizer.
    static let count = reducedUnderSanitizer(100_000, by: 10)

    @Test func entriesEvictedByCountAreReleased() async {
        let values = Census()
        let keys = Census()
        let evicted = Protected(0)
        weak var released: MemoryCache<TrackedKey, Tracked>?
        do {
            let cache = MemoryCache<TrackedKey, Tracked>(countLimit: 1_000)
            released = cache
            let heldByHandler = Tracked(values)
            cache.onEviction { _, _, reason in
                withExtendedLifetime(heldByHandler) { if reason == .count { evicted.write { $0 += 1 } } }
            }
            for index in 0..<Self.count { cache[TrackedKey(keys, index)] = Tracked(values) }
            #expect(cache.count == 1_000)
            #expect(cache.statistics.evictions == Self.count - 1_000)
            #expect(evicted.value == Self.count - 1_000)
            #expect(values.released == Self.count - 1_000)
            #expect(keys.released == Self.count - 1_000)
        }
        #expect(released == nil)
        #expect(values.released == Self.count + 1)  // and the handler's value
        #expect(keys.released == Self.count)
    }

    @Test func entriesEvictedByCostAreReleased() async {
        let values = Census()
        let keys = Census()
        weak var released: MemoryCache<TrackedKey, Tracked>?
        do {
            let cache = MemoryCache<TrackedKey, Tracked>(costLimit: 10_000, policy: .lru)
            released = cache
            for index in 0..<Self.count {
                cache.setValue(Tracked(values), forKey: TrackedKey(keys, index), cost: 1 + index % 7)
            }
            let evictions = cache.statistics.evictions
            #expect(cache.count + evictions == Self.count)
            #expect(cache.totalCost <= 10_000)
            #expect(values.released == evictions)
            #expect(keys.released == evictions)
            // An entry that could never fit is turned away at once, and released.
            cache.setValue(Tracked(values), forKey: TrackedKey(keys, -1), cost: 10_001)
            #expect(values.released == evictions + 1)
            #expect(keys.released == evictions + 1)
        }
        #expect(released == nil)
        #expect(values.released == Self.count + 1)
        #expect(keys.released == Self.count + 1)
    }

    /// On a manual clock, with the background sweep held back: half the entries have a
    /// per-entry lifetime of a second and the rest the cache's ten; expiry by lookup, by a
    /// write, and by `removeExpired()` releases exactly the expired ones.
    @Test func expiredEntriesAreReleased() async {
        let values = Census()
        let keys = Census()
        let clock = ManualClock()
        weak var released: MemoryCache<TrackedKey, Tracked>?
        do {
            let cache = MemoryCache<TrackedKey, Tracked>(timeToLive: .seconds(10), clock: clock.cacheClock)
            released = cache
            cache.holdBackgroundSweep()
            for index in 0..<Self.count {
                let lifetime: Duration? = index % 2 == 0 ? .seconds(1) : nil
                cache.setValue(Tracked(values), forKey: TrackedKey(keys, index), timeToLive: lifetime)
            }
            clock.advance(by: .seconds(1))
            // A tenth of the short-lived entries expire by lookup, the rest by removeExpired().
            let missed = stride(from: 0, to: Self.count, by: 20).filter { cache[TrackedKey(keys, $0)] == nil }
            #expect(missed.count == Self.count / 20)
            #expect(values.released == Self.count / 20)
            cache.removeExpired()
            #expect(cache.count == Self.count / 2)
            #expect(cache.statistics.expirations == Self.count / 2)
            #expect(values.released == Self.count / 2)
            clock.advance(by: .seconds(9))
            cache.removeExpired()
            #expect(cache.count == 0)
            #expect(cache.statistics.expirations == Self.count)
            #expect(values.released == Self.count)
            #expect(keys.released == Self.count + Self.count / 20)  // and the keys looked up
        }
        #expect(released == nil)
    }

    /// Entries that expire by idleness are released by a lookup or by `removeExpired()`.
    @Test func idleEntriesAreReleased() async {
        let values = Census()
        let clock = ManualClock()
        do {
            let cache = MemoryCache<Int, Tracked>(timeToIdle: .seconds(5), clock: clock.cacheClock)
            cache.holdBackgroundSweep()
            for key in 0..<Self.count { cache[key] = Tracked(values) }
            clock.advance(by: .seconds(4))
            let read = (0..<Self.count / 2).filter { cache[$0] != nil }  // idle from now
            #expect(read.count == Self.count / 2)
            clock.advance(by: .seconds(4))
            cache.removeExpired()
            #expect(values.released == Self.count / 2)
            clock.advance(by: .seconds(2))
            let missed = (0..<Self.count / 4).filter { cache[$0] == nil }
            #expect(missed.count == Self.count / 4)
            #expect(values.released == Self.count / 2 + Self.count / 4)
            cache.removeExpired()
            #expect(values.released == Self.count)
            #expect(cache.statistics.expirations == Self.count)
        }
        #expect(values.released == Self.count)
    }

    /// The background sweep releases what expired, with no call into the cache.
    @Test(.timeLimit(.minutes(1))) func theBackgroundSweepReleasesExpiredEntries() async {
        let values = Census()
        let clock = ManualClock()
        let cache = MemoryCache<Int, Tracked>(timeToLive: .seconds(1), clock: clock.cacheClock)
        for key in 0..<Self.count { cache[key] = Tracked(values) }
        #expect(cache.isSweepScheduled)
        clock.advance(by: .seconds(1))
        #expect(await eventuallyHolds { values.released == Self.count })
        #expect(values.released == Self.count)
        #expect(cache.count == 0)
        #expect(cache.statistics.expirations == Self.count)
    }

    /// Removed, replaced, trimmed by count and by cost, and dropped by `removeAll()`: each
    /// value is released by the call that takes it out.
    @Test func removedReplacedAndTrimmedEntriesAreReleased() async {
        let values = Census()
        let keys = Census()
        weak var released: MemoryCache<TrackedKey, Tracked>?
        do {
            let cache = MemoryCache<TrackedKey, Tracked>()
            released = cache
            let quarter = Self.count / 4
            for index in 0..<Self.count { cache.setValue(Tracked(values), forKey: TrackedKey(keys, index), cost: 2) }
            let removed = (0..<quarter).filter { cache.removeValue(forKey: TrackedKey(keys, $0)) != nil }
            #expect(removed.count == quarter)
            #expect(values.released == quarter)
            for index in quarter..<2 * quarter {
                cache.setValue(Tracked(values), forKey: TrackedKey(keys, index), cost: 2)
            }
            #expect(values.released == 2 * quarter)
            #expect(cache.count == 3 * quarter)
            cache.trim(toCount: 2 * quarter)
            #expect(values.released == 3 * quarter)
            cache.trim(toCost: quarter)  // a cost of 2 each: half a quarter is left
            #expect(values.released == 3 * quarter + 3 * quarter / 2)
            #expect(cache.count == quarter / 2)
            cache.removeAll()
            #expect(cache.count == 0)
            #expect(values.released == Self.count + quarter)
            #expect(cache.statistics.removals + cache.statistics.evictions == Self.count + quarter)
        }
        #expect(released == nil)
        #expect(values.released == values.made)
        #expect(keys.released == keys.made)
    }

    /// A cache dropped while its background sweep is scheduled is released at once with every
    /// entry: the sweep holds it weakly.
    ///
    /// A thousand entries, not `count`: the sweep first runs a ``MemoryCache/sweepInterval`` (a
    /// second) after the first write, and while it runs it holds the cache. A hundred thousand
    /// writes took longer than that on a busy 2-core machine, so the sweep could be running, and
    /// holding the cache, when the test dropped it. A thousand take a few milliseconds, even
    /// under a sanitizer, so the cache is dropped while the sweep is scheduled and not running.
    @Test func aCacheWithASweepScheduledIsReleased() async {
        let values = Census()
        let entries = 1_000
        weak var released: MemoryCache<Int, Tracked>?
        do {
            let cache = MemoryCache<Int, Tracked>(countLimit: entries / 2)
            released = cache
            for key in 0..<entries { cache.setValue(Tracked(values), forKey: key, timeToLive: .seconds(3_600)) }
            #expect(cache.isSweepScheduled)
        }
        #expect(released == nil)
        #expect(values.released == entries)
    }

    /// Callers that share a single flight, flights that fail, and values evicted right after
    /// they were stored: every value made is released, and so is the cache.
    @Test(.timeLimit(.minutes(1))) func singleFlightsAreReleased() async {
        let values = Census()
        let keys = 1_000
        let callersPerKey = 10
        weak var released: MemoryCache<Int, Tracked>?
        do {
            let cache = MemoryCache<Int, Tracked>(countLimit: keys / 10)
            released = cache
            let failures = await withTaskGroup(of: Bool.self) { group in
                for caller in 0..<keys * callersPerKey {
                    let key = caller % keys
                    group.addTask {
                        do {
                            _ = try await cache.value(forKey: key) {
                                await Task.yield()
                                if key % 10 == 0 { throw Refused() }
                                return Tracked(values)
                            }
                            return false
                        } catch {
                            return true
                        }
                    }
                }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(failures == keys / 10 * callersPerKey)
        }
        #expect(released == nil)
        #expect(values.released == values.made)
    }
}

// MARK: Support

/// What a failing flight throws.
private struct Refused: Error {}

/// A key whose deinit is counted; equal to any key with the same number.
final class TrackedKey: Hashable, Sendable {
    let census: Census
    let number: Int

    init(_ census: Census, _ number: Int) {
        self.census = census
        self.number = number
        census.noteMade()
    }

    deinit { census.noteReleased() }

    static func == (left: TrackedKey, right: TrackedKey) -> Bool { left.number == right.number }
    func hash(into hasher: inout Hasher) { hasher.combine(number) }
}
