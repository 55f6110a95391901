import Testing

@testable import BatonCache

@Suite("Eviction order")
struct EvictionOrderTests {
    /// The sequence worked by hand below: three slots, then A B C, a hit on A, D, E, hits on A
    /// and D, F, G.
    func run(_ policy: EvictionPolicy, timeToLive: Duration? = nil) -> [String] {
        let clock = ManualClock()
        let cache = MemoryCache<String, Int>(
            countLimit: 3, timeToLive: timeToLive, policy: policy, shardCount: 1, clock: clock.cacheClock)
        let log = EvictionLog.attached(to: cache)
        cache["A"] = 1
        cache["B"] = 2
        cache["C"] = 3
        _ = cache["A"]
        cache["D"] = 4
        cache["E"] = 5
        _ = cache["A"]
        _ = cache["D"]
        cache["F"] = 6
        cache["G"] = 7
        #expect(log.reasons.allSatisfy { $0 == .count })
        return log.keys
    }

    /// SIEVE, newest on the left, hand `^`, visited `*`:
    /// - A B C → `C B A`; hit A → `C B A*`.
    /// - D: hand starts at the oldest, A*: clear it, move to B: unvisited, evict **B**; the
    ///   hand rests on C. → `D C A`.
    /// - E: hand at C, unvisited: evict **C**; hand moves to D. → `E D A`.
    /// - hits on A and D → `E D* A*`.
    /// - F: hand at D*: clear, move to E: unvisited, evict **E**; the hand passes the newest
    ///   and returns to the oldest. → `F D A*`.
    /// - G: hand at A*: clear, move to D (cleared before): evict **D**. → `G F A`.
    @Test("SIEVE evicts B, C, E, D on the hand-worked sequence")
    func sieveOrder() {
        #expect(run(.sieve) == ["B", "C", "E", "D"])
    }

    /// The hand looks for an expired entry as well as an unvisited one: entries that can expire
    /// but have not must still be passed over when visited.
    @Test("SIEVE evicts in the same order when the entries can expire but none has")
    func sieveOrderWithALifetime() {
        #expect(run(.sieve, timeToLive: .seconds(60)) == ["B", "C", "E", "D"])
    }

    /// LRU, most recent on the left: `C B A` → hit A `A C B` → D evicts **B** `D A C` → E evicts
    /// **C** `E D A` → hits `D A E` → F evicts **E** `F D A` → G evicts **A**.
    @Test("LRU evicts B, C, E, A on the same sequence")
    func lruOrder() {
        #expect(run(.lru) == ["B", "C", "E", "A"])
    }

    /// A write that replaces a live entry's value uses the entry as a hit does: SIEVE sets its
    /// visited bit (the hand passes it over once), LRU moves it to the front. A, B, C, then A
    /// rewritten, then D: both evict B, where a rewrite that did not count would leave A, the
    /// oldest, to go.
    @Test(
        "A rewrite of a live entry counts as a use: SIEVE and LRU keep it over an older untouched one",
        arguments: [EvictionPolicy.sieve, .lru])
    func rewriteCountsAsAUse(policy: EvictionPolicy) {
        let cache = MemoryCache<String, Int>(countLimit: 3, policy: policy, shardCount: 1)
        let log = EvictionLog.attached(to: cache)
        cache["A"] = 1
        cache["B"] = 2
        cache["C"] = 3
        cache["A"] = 10
        cache["D"] = 4
        #expect(log.entries.filter { $0.reason == .count }.map(\.key) == ["B"])
        #expect(cache.peek("A") == 10)
    }

    /// A get-or-insert for A whose `make` stores A, B and C itself gets the A stored meanwhile,
    /// and uses it as a hit does: then D evicts B under both policies, where a get-or-insert
    /// that did not count would leave A, the oldest and untouched, to go.
    @Test(
        "A get-or-insert that returns a value stored while it computed counts as a use: SIEVE and LRU keep it",
        arguments: [EvictionPolicy.sieve, .lru])
    func getOrInsertOfAStoredValueCountsAsAUse(policy: EvictionPolicy) {
        let cache = MemoryCache<String, Int>(countLimit: 3, policy: policy, shardCount: 1)
        let log = EvictionLog.attached(to: cache)
        let got = cache.value(forKey: "A") {
            cache["A"] = 1
            cache["B"] = 2
            cache["C"] = 3
            return 10
        }
        #expect(got == 1)
        cache["D"] = 4
        #expect(log.entries.filter { $0.reason == .count }.map(\.key) == ["B"])
        #expect(cache.peek("A") == 1)
    }

    /// A's slot is freed with its visited bit set and taken by X: X starts unvisited, so the
    /// hand evicts it, the oldest, rather than passing it over for Y.
    @Test("A new entry in a freed slot starts unvisited, whatever the slot's last entry did")
    func aReusedSlotStartsUnvisited() {
        let cache = MemoryCache<String, Int>(countLimit: 2, policy: .sieve, shardCount: 1)
        let log = EvictionLog.attached(to: cache)
        cache["A"] = 1
        _ = cache["A"]
        cache.removeValue(forKey: "A")
        cache["X"] = 2
        cache["Y"] = 3
        cache["Z"] = 4
        #expect(log.entries.filter { $0.reason == .count }.map(\.key) == ["X"])
    }

    /// Misses on a hot set of 50 keys, read once per round, while 60 one-off keys pass
    /// through a cache of 100 between rounds. The hot keys are stored and read once first.
    func hotMissesDuringScans(_ policy: EvictionPolicy) -> Int {
        let cache = MemoryCache<Int, Int>(countLimit: 100, policy: policy, shardCount: 1)
        for key in 0..<50 {
            cache[key] = key
            _ = cache[key]
        }
        var misses = 0
        var next = 1_000
        for _ in 0..<20 {
            for _ in 0..<60 {
                cache[next] = next
                next += 1
            }
            for key in 0..<50 where cache[key] == nil {
                misses += 1
                cache[key] = key
            }
        }
        return misses
    }

    @Test("SIEVE keeps a hot set through one-off scans that flush LRU")
    func scanResistance() {
        #expect(hotMissesDuringScans(.sieve) == 0)
        #expect(hotMissesDuringScans(.lru) > 0)
    }
}
