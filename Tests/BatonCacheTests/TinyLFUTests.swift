import BatonTestSupport
import Foundation
import Testing

@testable import BatonCache

@Suite("TinyLFU")
struct TinyLFUTests {
    /// The sequence worked by hand below, in one shard of three (window of one):
    ///
    /// - A B C: each write past the window's one entry moves the window's oldest to the main
    ///   queue. → main `B A` (A oldest), window `C`.
    /// - get A, A, B, and X (a miss, not stored): the sketch counts A 2, B 1, X 1; A and B are
    ///   visited.
    /// - D: the window's C (count 0) meets SIEVE's victim: the hand clears A and B and comes
    ///   back to A (count 2). C is asked for less often: **C** is evicted. → window `D`.
    /// - get D ×3: D counts 3.
    /// - E: D (3) meets SIEVE's victim A (2, its bit cleared): D moves to the main queue and
    ///   **A** is evicted. → main `D B`, window `E`.
    /// - F: E (0) meets B (1): **E** is evicted. → window `F`.
    /// - get F: F counts 1. G: F (1) meets B (1): a tie keeps the main queue's entry, **F**
    ///   is evicted.
    @Test(
        "TinyLFU evicts C, A, E, F on the hand-worked sequence, also when the entries can expire but none has",
        arguments: [nil, Duration.seconds(60)])
    func order(timeToLive: Duration?) {
        let clock = ManualClock()
        let cache = MemoryCache<String, Int>(
            countLimit: 3, timeToLive: timeToLive, policy: .tinyLFU, shardCount: 1, clock: clock.cacheClock)
        let log = EvictionLog.attached(to: cache)
        cache["A"] = 1
        cache["B"] = 2
        cache["C"] = 3
        for key in ["A", "A", "B", "X"] { _ = cache[key] }
        cache["D"] = 4
        for _ in 0..<3 { _ = cache["D"] }
        cache["E"] = 5
        cache["F"] = 6
        _ = cache["F"]
        cache["G"] = 7
        #expect(log.keys == ["C", "A", "E", "F"])
        #expect(log.reasons.allSatisfy { $0 == .count })
        #expect(cache.peek("B") == 2 && cache.peek("D") == 4 && cache.peek("G") == 7)
        #expect(cache.statistics.evictions == 4)
        #expect(cache.invariantViolations().isEmpty)
    }

    /// 80 keys read eight times each fill most of a cache of 100; then 500 keys are each read
    /// twice through the cache (a miss and a write, then a hit), five times the cache. Each
    /// scanned key's hit sets its SIEVE visited bit, so SIEVE's hand must go all the way round,
    /// clearing the popular keys' bits on one pass and evicting them on the next. TinyLFU
    /// keeps the popular keys: each scanned key was asked for twice, less often than they
    /// were, and leaves from the window.
    ///
    /// Unless the sketch's counters say otherwise: a scanned key whose four counters all
    /// collide with popular keys' looks popular too, and may displace one. Where keys land in
    /// the sketch depends on the process's hash seed, so a run of the scan loses a popular key
    /// now and then (1 run in 80, measured). Ten runs over disjoint keys (so ten different draws of
    /// collisions) may lose at most 5 of their 800 popular keys; SIEVE loses more than half of
    /// them in every run.
    @Test("A one-off scan five times the cache does not flush frequently read entries")
    func scanDoesNotFlushPopularEntries() {
        func popularSurvivors(_ policy: EvictionPolicy, keysFrom base: Int) -> Int {
            let cache = MemoryCache<Int, Int>(countLimit: 100, policy: policy, shardCount: 1)
            for round in 0..<8 {
                for key in base..<(base + 80) where cache[key] == nil {
                    #expect(round == 0)
                    cache[key] = key
                }
            }
            for key in (base + 1_000)..<(base + 1_500) {
                if cache[key] == nil { cache[key] = key }
                #expect(cache[key] == key)
            }
            #expect(cache.count == 100)
            #expect(cache.invariantViolations().isEmpty)
            return (base..<(base + 80)).filter { cache.peek($0) != nil }.count
        }
        let bases = (0..<10).map { $0 * 10_000 }
        let kept = bases.map { popularSurvivors(.tinyLFU, keysFrom: $0) }
        #expect(kept.reduce(0, +) >= 795, "popular keys kept per run: \(kept)")
        for base in bases {
            #expect(popularSurvivors(.sieve, keysFrom: base) < 40, "the scan is meant to be one that flushes SIEVE")
        }
    }

    /// 40, 40 and 20 fill a cost limit of 100; the 20 is read twice. A write of 30 needs room:
    /// the window's 20 (read twice) beats SIEVE's victim, the first 40 (never read), which
    /// goes — and nothing else. Then random costs never pass the limit.
    @Test("costLimit is never exceeded; TinyLFU evicts only as far as needed")
    func costLimit() {
        let cache = MemoryCache<Int, String>(costLimit: 100, policy: .tinyLFU, shardCount: 1)
        let log = EvictionLog.attached(to: cache)
        cache.setValue("a", forKey: 1, cost: 40)
        cache.setValue("b", forKey: 2, cost: 40)
        cache.setValue("c", forKey: 3, cost: 20)
        _ = cache[3]
        _ = cache[3]
        cache.setValue("d", forKey: 4, cost: 30)
        #expect(log.keys == [1])
        #expect(log.reasons == [.cost])
        #expect(cache.totalCost == 90)
        #expect(cache.peek(2) == "b" && cache.peek(3) == "c" && cache.peek(4) == "d")
        var generator = Xorshift(seed: 7)
        for key in 10..<2_000 {
            if key % 3 == 0 { _ = cache[key - 1] }
            cache.setValue("v", forKey: key, cost: Int(generator.next() % 61))
            #expect(cache.totalCost <= 100)
        }
        #expect(cache.invariantViolations().isEmpty)
    }

    /// Three slots: A B C (C in the window), then two looks at C, then D. Two lookups make C
    /// the more requested and evict A; quiet looks count nothing, so C, never asked for,
    /// loses to A and is evicted.
    @Test("A peek is not counted by the sketch")
    func peekIsNotCounted() {
        func evicted(looking look: (MemoryCache<String, Int>) -> Void) -> [String] {
            let cache = MemoryCache<String, Int>(countLimit: 3, policy: .tinyLFU, shardCount: 1)
            let log = EvictionLog.attached(to: cache)
            cache["A"] = 1
            cache["B"] = 2
            cache["C"] = 3
            look(cache)
            look(cache)
            cache["D"] = 4
            return log.keys
        }
        #expect(evicted { _ = $0.value(forKey: "C") } == ["A"])
        #expect(evicted { _ = $0.peek("C") } == ["C"])
        #expect(evicted { _ = $0.contains("C") } == ["C"])
    }

    @Test("Lowering countLimit keeps the entries read most and evicts exactly down to it")
    func loweringCountLimit() {
        let cache = MemoryCache<Int, Int>(countLimit: 10, policy: .tinyLFU, shardCount: 1)
        let log = EvictionLog.attached(to: cache)
        for key in 1...10 { cache[key] = key }
        for _ in 0..<2 {
            for key in [3, 7, 10] { _ = cache[key] }
        }
        cache.countLimit = 3
        #expect(cache.count == 3)
        #expect(log.keys.count == 7)
        #expect(log.reasons == Array(repeating: .count, count: 7))
        #expect(cache.statistics.evictions == 7)
        for key in [3, 7, 10] { #expect(cache.peek(key) == key) }
        #expect(cache.invariantViolations().isEmpty)
    }

    /// A is read while in the window, then moves to the main list when B arrives: it joins the
    /// main list unvisited, so SIEVE's hand stops at it. C, read twice, beats A (read once) and
    /// A is evicted; had A kept its visit, the hand would have passed it for B.
    @Test("An entry promoted from the window joins the main list unvisited")
    func promotedEntriesStartUnvisited() {
        let cache = MemoryCache<String, Int>(countLimit: 3, policy: .tinyLFU, shardCount: 1)
        let log = EvictionLog.attached(to: cache)
        cache["A"] = 1
        _ = cache["A"]
        cache["B"] = 2
        cache["C"] = 3
        _ = cache["C"]
        _ = cache["C"]
        cache["D"] = 4
        #expect(log.keys == ["A"])
        #expect(cache.peek("B") == 2 && cache.peek("C") == 3)
    }

    /// One write that needs two evictions (D costs 2 where 3 are held, at a limit of 3). The
    /// window's C, asked for three times, beats SIEVE's first victim A (never asked for) and
    /// leaves the window for the main list at once, so the second eviction takes from the main
    /// list: B. Had C stayed in the window, it would meet B (asked for five times) and go.
    @Test("A window entry that wins leaves the window at once: the same write's next victim is from the main list")
    func aWinnerLeavesTheWindowAtOnce() {
        let cache = MemoryCache<String, Int>(costLimit: 3, policy: .tinyLFU, shardCount: 1)
        let log = EvictionLog.attached(to: cache)
        for _ in 0..<5 { _ = cache["B"] }  // misses count in the sketch and visit nothing
        for _ in 0..<3 { _ = cache["C"] }
        cache.setValue(1, forKey: "A", cost: 1)
        cache.setValue(2, forKey: "B", cost: 1)
        cache.setValue(3, forKey: "C", cost: 1)  // main A B, window C
        cache.setValue(4, forKey: "D", cost: 2)
        #expect(log.keys == ["A", "B"])
        #expect(cache.peek("C") == 3 && cache.peek("D") == 4)
        #expect(cache.invariantViolations().isEmpty)
    }

    /// The window's share is 1% of the shard's entries: 300 entries give it three, and with two of
    /// them removed its one entry is below the share of the 298 left (two). Until the window
    /// fills its share again, the victims come from the main list, and the window's entry, as
    /// unread as they are, is not weighed against them.
    @Test("A window below its share gives up nothing: the victims come from the main list")
    func windowBelowItsShareKeepsItsEntries() {
        let cache = MemoryCache<Int, Int>(countLimit: 300, policy: .tinyLFU, shardCount: 1)
        for key in 0..<300 { cache[key] = key }
        cache.removeValue(forKey: 299)
        cache.removeValue(forKey: 298)
        cache.countLimit = 290
        #expect(cache.count == 290)
        #expect(cache.peek(297) == 297)
        #expect(cache.invariantViolations().isEmpty)
    }

    /// A key asked for often while it was not stored (say, evicted earlier) gets in at its
    /// first write: the sketch remembers the requests, so it beats the main queue's victim.
    @Test("A key asked for often enters the main queue at its first write")
    func frequentKeyIsAdmitted() {
        let cache = MemoryCache<Int, Int>(countLimit: 4, policy: .tinyLFU, shardCount: 1)
        for key in 1...4 { cache[key] = key }  // main 1 2 3, window 4
        for _ in 0..<5 { _ = cache[9] }  // asked for five times, not stored
        cache[9] = 9  // the window's 4 (0) meets SIEVE's victim 1 (0): 4 goes
        cache[5] = 5  // 9 (5) meets 1 (0): 9 moves to the main queue, 1 goes
        cache[6] = 6  // 5 (0) meets 2 (0): 5 goes
        #expect(cache.peek(9) == 9)
        #expect(cache.peek(4) == nil && cache.peek(1) == nil && cache.peek(5) == nil)
        #expect(cache.count == 4)
        #expect(cache.invariantViolations().isEmpty)
    }

    @Test("By default a TinyLFU shard holds at least 128 entries of countLimit, other policies' 32")
    func defaultShards() {
        #expect(MemoryCache<Int, Int>(countLimit: 1_000, policy: .tinyLFU).shardCount == 4)
        #expect(MemoryCache<Int, Int>(countLimit: 1_000, policy: .sieve).shardCount == 16)
        #expect(MemoryCache<Int, Int>(countLimit: 100, policy: .tinyLFU).shardCount == 1)
        // Exactly 128 (or 32) a shard is enough: no halving at the boundary.
        #expect(MemoryCache<Int, Int>(countLimit: 512, policy: .tinyLFU).shardCount == 4)
        #expect(MemoryCache<Int, Int>(countLimit: 512, policy: .sieve).shardCount == 16)
        #expect(MemoryCache<Int, Int>(countLimit: 1, policy: .lru).shardCount == 1)
    }

    /// 4 threads from a start barrier read through the cache (a miss writes the key) over
    /// 400 keys into a cache of 100, with a handler counting what leaves. Every write is
    /// either still readable or was reported: insertions = entries left + evictions, exactly,
    /// and each thread's hits and misses add up to its lookups.
    @Test(
        "Racing read-through threads: every write readable or counted as evicted", .timeLimit(.minutes(1)),
        arguments: 1...3)
    func racingReadThrough(round: Int) async {
        let threads = 4
        let perThread = reducedUnderSanitizer(20_000, by: 10)
        let cache = MemoryCache<Int, Int>(countLimit: 100, policy: .tinyLFU, shardCount: 4)
        let log = EvictionLog.attached(to: cache)
        let board = TallyBoard()
        let finished = await raceThreads(
            (0..<threads).map { thread in
                {
                    var random = Xorshift(seed: UInt64(round * 10 + thread))
                    var tally = ThreadTally()
                    for _ in 0..<perThread {
                        // Skewed: half the requests go to the 40 lowest keys.
                        let key = random.next() % 2 == 0 ? Int(random.next() % 40) : Int(random.next() % 400)
                        tally.gets += 1
                        if let value = cache[key] {
                            tally.hits += 1
                            if value != key { board.violation("key \(key) read \(value)") }
                        } else {
                            tally.sets += 1
                            cache[key] = key
                        }
                    }
                    board.add(tally)
                }
            })
        #expect(finished)
        let total = board.total
        let statistics = cache.statistics
        #expect(board.problems.isEmpty)
        #expect(statistics.hits == total.hits)
        #expect(statistics.misses == total.gets - total.hits)
        #expect(statistics.insertions == total.sets)
        // A racing thread may write a key another has just written: that is a replacement.
        #expect(statistics.insertions == cache.count + statistics.evictions + statistics.removals)
        #expect(log.keys.count == statistics.evictions + statistics.removals)
        #expect(log.reasons.allSatisfy { $0 == .count || $0 == .replaced })
        #expect(cache.count == 100)
        #expect(cache.invariantViolations().isEmpty)
    }
}

@Suite("Frequency sketch")
struct FrequencySketchTests {
    @Test("Counts each hash, saturates at 15, and is never below the true count")
    func counts() {
        let sketch = FrequencySketch(capacity: 64)
        defer { sketch.deallocate() }
        for hash in 0..<64 {
            for _ in 0..<(hash % 5) { sketch.increment(hash * 7919) }
        }
        for hash in 0..<64 { #expect(sketch.estimate(hash * 7919) >= UInt8(hash % 5)) }
        // With 4 counters per entry in each row, 64 keys rarely meet in all four rows.
        #expect((0..<64).filter { sketch.estimate($0 * 7919) != UInt8($0 % 5) }.count <= 2)
        for _ in 0..<40 { sketch.increment(-1) }
        #expect(sketch.estimate(-1) == 15)
    }

    @Test("Ageing halves every count, after capacity × 10 counted increments")
    func ageing() {
        let sketch = FrequencySketch(capacity: 16)
        defer { sketch.deallocate() }
        for _ in 0..<12 { sketch.increment(42) }
        #expect(sketch.estimate(42) == 12)
        #expect(!sketch.isDueForAging)
        var hash = 1_000
        while !sketch.isDueForAging {
            sketch.increment(hash)
            hash += 1
        }
        #expect(hash - 1_000 == 16 * 10 - 12)
        // Collisions with the keys counted since may have raised 42's estimate a little.
        let before = sketch.estimate(42)
        #expect(before >= 12)
        let samples = sketch.samples.load(0)
        sketch.age()
        #expect(sketch.estimate(42) == before / 2)
        #expect(sketch.samples.load(0) == samples / 2)
        #expect(!sketch.isDueForAging)
    }

    @Test("Ageing takes a lone 1 to 0, in the first counter of a word as in any other")
    func ageingALoneOne() {
        let sketch = FrequencySketch(capacity: 16)
        defer { sketch.deallocate() }
        for position in [0, 1, 9, 16, sketch.counterCount - 1] {
            for other in 0..<sketch.counterCount { sketch.setCounter(0, at: other) }
            sketch.setCounter(1, at: position)
            sketch.age()
            #expect(
                (0..<sketch.counterCount).allSatisfy { sketch.counter(at: $0) == 0 }, "a 1 at \(position) survived")
        }
    }

    /// The samples that make the sketch due for ageing count the increments that raised some
    /// counter: one raised counter of four is enough, none (all four saturated) is no sample.
    @Test("An increment is a sample when it raises any one of its key's four counters, and none when all are saturated")
    func samplesCountAnyRaise() {
        let sketch = FrequencySketch(capacity: 16)
        defer { sketch.deallocate() }
        let hash = 12_345
        let (a, b, c, d) = sketch.positions(hash)
        let positions = [a, b, c, d]
        for open in 0..<4 {
            for (row, position) in positions.enumerated() {
                sketch.setCounter(row == open ? 3 : FrequencySketch.maximum, at: position)
            }
            let before = sketch.samples.load(0)
            sketch.increment(hash)
            #expect(sketch.samples.load(0) == before + 1, "only row \(open) could be raised")
            #expect(sketch.counter(at: positions[open]) == 4)
        }
        for position in positions { sketch.setCounter(FrequencySketch.maximum, at: position) }
        let before = sketch.samples.load(0)
        sketch.increment(hash)
        #expect(sketch.samples.load(0) == before)
    }

    /// Conservative update: a counter that a colliding key has raised past the estimate is
    /// left where it is, so the estimate of the key it collides with is not raised further.
    @Test("An increment raises only the counters that hold the key's estimate")
    func conservativeUpdate() {
        let sketch = FrequencySketch(capacity: 16)
        defer { sketch.deallocate() }
        let (a, b, c, d) = sketch.positions(4_242)
        for (position, value) in zip([a, b, c, d], [3, 5, 3, 9] as [UInt8]) { sketch.setCounter(value, at: position) }
        #expect(sketch.estimate(4_242) == 3)
        sketch.increment(4_242)
        #expect([a, b, c, d].map { sketch.counter(at: $0) } == [4, 5, 4, 9])
        sketch.increment(4_242)
        #expect([a, b, c, d].map { sketch.counter(at: $0) } == [5, 5, 5, 9])
        sketch.increment(4_242)
        #expect([a, b, c, d].map { sketch.counter(at: $0) } == [6, 6, 6, 9])
        #expect(sketch.estimate(4_242) == 6)
    }

    @Test("A key's four counters are one a row in one cache line, and keys spread over every block and counter")
    func oneCacheLineAKey() {
        // Sketches of several sizes: malloc alone would align some of them to 64 bytes by chance.
        let sketches = [16, 64, 100, 1_000, 5_000, 20_000, 70_000, 300_000].map { FrequencySketch(capacity: $0) }
        defer { for sketch in sketches { sketch.deallocate() } }
        for sketch in sketches {
            #expect(Int(bitPattern: sketch.counters.base) % 64 == 0, "capacity \(sketch.capacity)")
        }
        // 4 counters a row for each entry, 4 rows, in 64-byte blocks of 128 counters; 64 blocks
        // at least.
        #expect(sketches[5].capacity == 32_768 && sketches[5].counterCount == 32_768 * 4 * 4)
        #expect(sketches[5].byteCount == sketches[5].counterCount / 2)
        #expect(sketches[3].counterCount == 1_024 * 4 * 4)
        #expect(sketches[2].counterCount == FrequencySketch.minimumBlocks * 128)
        let largestAtTheFloor = FrequencySketch(capacity: 512)
        defer { largestAtTheFloor.deallocate() }
        #expect(sketches[2].counterCount == largestAtTheFloor.counterCount)
        let sketch = sketches[1]
        var blocks = Set<Int>()
        var places = [Set<Int>](repeating: [], count: 4)
        var separate = true
        // Hashes that share their low bits, as the keys of one shard do.
        for hash in (0..<4_096).map({ $0 << 6 }) {
            let (a, b, c, d) = sketch.positions(hash)
            let positions = [a, b, c, d]
            // Counter p is in byte p / 2: a block's 128 counters are its 64 bytes.
            separate = separate && positions.map { $0 / 128 } == Array(repeating: a / 128, count: 4)
            separate = separate && positions.map { $0 % 128 / 32 } == [0, 1, 2, 3]
            blocks.insert(a / 128)
            for (row, position) in positions.enumerated() { places[row].insert(position % 32) }
        }
        #expect(separate, "some key's counters leave its block or share a row")
        #expect(blocks.count == sketch.byteCount / 64)
        #expect(places.allSatisfy { $0.count == 32 })
    }

    @Test("Ageing halves each counter on its own, whatever its neighbours hold")
    func ageingEachCounter() {
        let sketch = FrequencySketch(capacity: 16)
        defer { sketch.deallocate() }
        // Every value from 0 to 15 beside every other, odd ones included, whose low bit a
        // shifted word would carry into the counter below, in the same byte or the next.
        let values = (0..<sketch.counterCount).map { position -> UInt8 in
            let value: Int = (position * 7 + position / 16) % 16
            return UInt8(value)
        }
        for (position, value) in values.enumerated() { sketch.setCounter(value, at: position) }
        #expect((0..<sketch.counterCount).map { sketch.counter(at: $0) } == values)
        sketch.age()
        let aged = (0..<sketch.counterCount).map { sketch.counter(at: $0) }
        #expect(aged == values.map { $0 >> 1 })
    }

    @Test("Two counters share a byte; an increment raises its key's counter in its own 4 bits, up to 15 and no more")
    func countersShareAByte() {
        let sketch = FrequencySketch(capacity: 16)
        defer { sketch.deallocate() }
        // A key whose first counter is the even one of its byte, and one whose first counter is
        // the odd one: a raise must add one in its own half of the byte either way.
        let even = (0..<1_000).first { sketch.positions($0).0 % 2 == 0 }!
        let odd = (0..<1_000).first { sketch.positions($0).0 % 2 == 1 }!
        for hash in [even, odd] {
            let (a, b, c, d) = sketch.positions(hash)
            let mine = [a, b, c, d]
            // Each counter's neighbour is the other counter of its byte; each row's neighbour
            // holds another value, so that no row's byte could pass for another's.
            let neighbours: [UInt8] = [7, 8, 9, 10]
            for (position, neighbour) in zip(mine, neighbours) {
                sketch.setCounter(13, at: position)
                sketch.setCounter(neighbour, at: position ^ 1)
            }
            sketch.increment(hash)
            sketch.increment(hash)
            #expect(mine.map { sketch.counter(at: $0) } == [15, 15, 15, 15], "hash \(hash)")
            #expect(mine.map { sketch.counter(at: $0 ^ 1) } == neighbours, "hash \(hash)")
            // The byte holds both: the even counter in its low 4 bits.
            #expect(sketch.counters.load(a / 2) == (a % 2 == 0 ? 15 | 7 << 4 : 7 | 15 << 4), "hash \(hash)")
            // Saturated: a third increment changes nothing.
            sketch.increment(hash)
            #expect(mine.map { sketch.counter(at: $0) } == [15, 15, 15, 15], "hash \(hash)")
            #expect(mine.map { sketch.counter(at: $0 ^ 1) } == neighbours, "hash \(hash)")
            // Beside saturated neighbours, the last raise to 15 carries nothing into them.
            for position in mine {
                sketch.setCounter(14, at: position)
                sketch.setCounter(15, at: position ^ 1)
            }
            sketch.increment(hash)
            #expect(mine.map { sketch.counter(at: $0) } == [15, 15, 15, 15], "hash \(hash)")
            #expect(mine.map { sketch.counter(at: $0 ^ 1) } == [15, 15, 15, 15], "hash \(hash)")
        }
    }

    @Test("Growing makes each new block a copy of the old block it folds onto")
    func growingCopiesEveryBlock() {
        var sketch = FrequencySketch(capacity: 512)
        let old = (0..<sketch.counterCount).map { position -> UInt8 in
            let value: Int = (position * 5 + position / 128) % 16
            return UInt8(value)
        }
        for (position, value) in old.enumerated() { sketch.setCounter(value, at: position) }
        sketch = sketch.grown(toHold: 3_000)
        defer { sketch.deallocate() }
        #expect(sketch.capacity == 4_096 && sketch.counterCount == 8 * old.count)
        let grown = (0..<sketch.counterCount).map { sketch.counter(at: $0) }
        #expect(grown == (0..<sketch.counterCount).map { old[$0 % old.count] })
    }

    @Test("Growing keeps every estimate")
    func growing() {
        var sketch = FrequencySketch(capacity: 512)
        for hash in 0..<16 {
            for _ in 0..<(hash % 7) { sketch.increment(hash) }
        }
        let before = (0..<16).map { sketch.estimate($0) }
        let samples = sketch.samples.load(0)
        #expect(samples > 0)
        sketch = sketch.grown(toHold: 3_000)
        defer { sketch.deallocate() }
        #expect(sketch.capacity == 4_096 && sketch.counterCount > FrequencySketch.minimumBlocks * 128)
        #expect((0..<16).map { sketch.estimate($0) } == before)
        // The increments counted so far still count towards the next ageing.
        #expect(sketch.samples.load(0) == samples)
    }
}
