import Testing

@testable import BatonCache

/// `timeToLive` given per write: it overrides the cache's lifetime for that entry only.
@Suite("Per-entry lifetimes")
struct EntryLifetimeTests {
    @Test("An entry's own lifetime ends it exactly then, shorter or longer than the cache's")
    func ownLifetimeOverridesTheCaches() {
        let clock = ManualClock()
        let cache = MemoryCache<String, Int>(timeToLive: .seconds(60), clock: clock.cacheClock)
        cache.holdBackgroundSweep()
        cache.setValue(1, forKey: "short", timeToLive: .seconds(10))
        cache.setValue(2, forKey: "long", timeToLive: .seconds(600))
        cache.setValue(3, forKey: "default")
        clock.advance(by: .seconds(10) - .nanoseconds(1))
        #expect(cache["short"] == 1)
        clock.advance(by: .nanoseconds(1))
        #expect(cache["short"] == nil)
        clock.advance(by: .seconds(50) - .nanoseconds(1))
        #expect(cache["default"] == 3)
        clock.advance(by: .nanoseconds(1))
        #expect(cache["default"] == nil)
        #expect(cache["long"] == 2)
        clock.advance(by: .seconds(540) - .nanoseconds(1))
        #expect(cache["long"] == 2)
        clock.advance(by: .nanoseconds(1))
        #expect(cache["long"] == nil)
        #expect(cache.statistics.expirations == 3)
    }

    @Test("A cache without a lifetime expires only the entries given one, reported as .expired")
    func lifetimesOnACacheWithout() {
        let clock = ManualClock()
        let cache = MemoryCache<String, Int>(countLimit: 10, clock: clock.cacheClock)
        cache.holdBackgroundSweep()
        let log = EvictionLog.attached(to: cache)
        cache["forever"] = 1
        cache.setValue(2, forKey: "brief", timeToLive: .milliseconds(5))
        clock.advance(by: .milliseconds(5))
        #expect(cache.peek("brief") == nil)
        #expect(!cache.contains("brief"))
        #expect(cache["brief"] == nil)
        #expect(log.keys == ["brief"])
        #expect(log.reasons == [.expired])
        clock.advance(by: .seconds(1_000_000))
        #expect(cache["forever"] == 1)
    }

    @Test("Rewriting a key sets its lifetime anew, with or without one of its own")
    func rewritingResetsTheLifetime() {
        let clock = ManualClock()
        let cache = MemoryCache<String, Int>(clock: clock.cacheClock)
        cache.holdBackgroundSweep()
        cache.setValue(1, forKey: "k", timeToLive: .seconds(5))
        clock.advance(by: .seconds(4))
        cache.setValue(2, forKey: "k", timeToLive: .seconds(5))
        clock.advance(by: .seconds(4))
        #expect(cache["k"] == 2)
        cache["k"] = 3  // no lifetime of its own, none for the cache: lives until removed
        clock.advance(by: .seconds(3600))
        #expect(cache["k"] == 3)
        #expect(cache.invariantViolations().isEmpty)
    }

    @Test("timeToIdle still applies to an entry with its own lifetime")
    func idleStillApplies() {
        let clock = ManualClock()
        let cache = MemoryCache<String, Int>(timeToIdle: .seconds(10), clock: clock.cacheClock)
        cache.holdBackgroundSweep()
        cache.setValue(1, forKey: "idle", timeToLive: .seconds(100))
        cache.setValue(2, forKey: "read", timeToLive: .seconds(15))
        clock.advance(by: .seconds(8))
        #expect(cache["read"] == 2)
        clock.advance(by: .seconds(2))
        #expect(cache.peek("idle") == nil)  // idle for 10 s
        #expect(cache["read"] == 2)  // read 2 s ago, its own 15 s not over
        clock.advance(by: .seconds(5))
        #expect(cache["read"] == nil)  // its own lifetime ended, though read 5 s ago
    }

    @Test("A get-or-insert that returns a value stored while it computed refreshes its idle time")
    func getOrInsertOfAStoredValueRefreshesIdleTime() {
        let clock = ManualClock()
        let cache = MemoryCache<String, Int>(timeToIdle: .seconds(10), clock: clock.cacheClock)
        cache.holdBackgroundSweep()
        let got = cache.value(forKey: "k") {
            cache["k"] = 1
            clock.advance(by: .seconds(8))
            return 2
        }
        #expect(got == 1)
        clock.advance(by: .seconds(8))
        #expect(cache.peek("k") == 1)  // used 8 s ago, not 16
        clock.advance(by: .seconds(2))
        #expect(cache.peek("k") == nil)
    }

    @Test("The get-or-insert forms store with the lifetime given")
    func getOrInsertForms() async throws {
        let clock = ManualClock()
        let cache = MemoryCache<String, Int>(clock: clock.cacheClock)
        cache.holdBackgroundSweep()
        #expect(cache.value(forKey: "sync", timeToLive: .seconds(3)) { 1 } == 1)
        let make: @Sendable () async throws -> Int = { 2 }
        let made = try await cache.value(forKey: "async", timeToLive: .seconds(4), orInsert: make)
        #expect(made == 2)
        clock.advance(by: .seconds(3))
        #expect(cache["sync"] == nil)
        #expect(cache["async"] == 2)
        clock.advance(by: .seconds(1))
        #expect(cache["async"] == nil)
    }

    @Test("A lifetime of zero or less is a precondition failure with a message")
    func nonPositiveLifetime() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let cache = MemoryCache<Int, Int>()
            cache.setValue(1, forKey: 1, timeToLive: .zero)
        }
        // An optimised precondition stops the process without its message.
        #if DEBUG
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("timeToLive must be positive"), "stderr: \(message)")
        #else
        _ = result
        #endif
        await #expect(processExitsWith: .failure) {
            let cache = MemoryCache<Int, Int>()
            _ = cache.value(forKey: 1, timeToLive: .seconds(-1)) { 1 }
        }
    }

    @Test("A lifetime too long for the clock saturates: the entry never expires")
    func enormousLifetime() {
        let clock = ManualClock()
        let cache = MemoryCache<Int, Int>(clock: clock.cacheClock)
        cache.holdBackgroundSweep()
        clock.advance(by: .seconds(10))
        cache.setValue(1, forKey: 1, timeToLive: .seconds(Int64.max))
        clock.advance(by: .seconds(1_000_000_000))
        #expect(cache[1] == 1)
        #expect(cache.invariantViolations().isEmpty)
    }
}
