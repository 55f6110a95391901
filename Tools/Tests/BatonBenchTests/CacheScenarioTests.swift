import BatonTesting
import Foundation
import Testing

@testable import BatonBench

@Suite("Cache scenario")
struct CacheScenarioTests {
    /// The hit-ratio cases: three exponents, with and without scans, at 1% and 10%.
    static let ratioCases = [0.01, 0.1].flatMap { share in
        [0.7, 0.9, 1.1].flatMap { exponent in
            [false, true].map { CacheScenario.ratioCase(exponent: exponent, scans: $0, share: share) }
        }
    }

    @Test("a tiny run measures every case for every contender, with sane values, and says why the anchors were skipped")
    func tinyRun() throws {
        let anchors = LibCacheSimAnchors(python: "/nonexistent/python3")
        let report = CacheScenario(anchors: anchors).run(
            BenchOptions(quick: true, reps: 1, scale: 0.001), progress: .silent)
        #expect(report.scenario == "cache")
        #expect(report.quick)

        let timedCases = ["90/10 ×1", "90/10 ×2", "50/50 ×1", "50/50 ×2"]
        let ratioCases = Self.ratioCases
        #expect(ratioCases.count == 12 && Set(ratioCases).count == 12)
        for contender in CacheContender.all {
            for name in timedCases {
                let row = report.result(case: name, contender: contender.name)
                guard contender.timed else {
                    #expect(row == nil)
                    continue
                }
                let timed = try #require(row)
                #expect(timed.unit == Unit.nanosecondsPerOperation)
                #expect(timed.median > 0 && timed.median.isFinite)
                #expect(timed.worst >= timed.median)
                #expect(timed.baton == contender.baton)
                #expect(timed.reps == 1)
            }
            for name in ratioCases {
                let row = report.result(case: name, contender: contender.name)
                if contender.bounded {
                    let row = try #require(row)
                    #expect(row.unit == Unit.hitRatio)
                    #expect((0...1).contains(row.median) && (0...1).contains(row.worst))
                    #expect(row.baton == contender.baton)
                } else {
                    #expect(row == nil, "an unbounded dictionary has no hit ratio to report")
                }
            }
        }
        // Belady's optimum bounds every cache, and is reported as the ceiling, not an anchor.
        for name in ratioCases {
            let belady = try #require(report.result(case: name, contender: CacheScenario.beladyName))
            #expect(!belady.baton)
            for contender in CacheContender.all where contender.bounded {
                let row = try #require(report.result(case: name, contender: contender.name))
                #expect(row.median <= belady.median, "\(contender.name) above Belady's optimum on \(name)")
            }
        }
        #expect(report.ceilings == [CacheScenario.beladyName])
        #expect(!report.results.contains { $0.contender.hasPrefix("libCacheSim") })
        #expect(report.notes.contains { $0.hasPrefix("libCacheSim anchors skipped: /nonexistent/python3 not found") })

        let timed = CacheContender.all.filter(\.timed).count
        let bounded = CacheContender.all.filter(\.bounded).count
        #expect(report.results.count == timed * timedCases.count + (bounded + 1) * ratioCases.count)
        #expect(CacheContender.all.contains { $0.baton } && CacheContender.all.contains { !$0.baton })
        #expect(try report.jsonLine().contains("\"scenario\":\"cache\""))
        #expect(try report.jsonLine().contains("\"ceilings\":[\"\(CacheScenario.beladyName)\"]"))

        #expect(report.notes.contains { $0.hasPrefix("Watched ÷ unwatched MemoryCache SIEVE time per operation") })
        let table = ReportTable(report).render()
        #expect(table.contains("^ \(CacheScenario.beladyName)"))
        #expect(!table.contains("vs \(CacheScenario.beladyName)"), "the ceiling is not an anchor")
    }

    @Test("TinyLFU beats SIEVE and LRU on a scan-polluted Zipf stream, and its one-shard twin matches it")
    func tinyLFUHitRatio() throws {
        let distribution = ZipfDistribution(keys: 20_000, exponent: 0.9)
        let stream = scanPollutedStream(
            distribution, keys: 20_000, length: 100_000, period: 400, scanLength: 100, seed: 5)
        func ratio(_ name: String) throws -> Double {
            let contender = try #require(CacheContender.all.first { $0.name == name })
            return contender.measureHitRatio(200, stream, 20_000)
        }
        let tinyLFU = try ratio("MemoryCache TinyLFU")
        #expect(tinyLFU > (try ratio("MemoryCache SIEVE")))
        #expect(tinyLFU > (try ratio("MemoryCache LRU")))
        #expect(abs(tinyLFU - (try ratio("MemoryCache TinyLFU, 1 shard"))) < 0.01)
        #expect(tinyLFU < beladyHitRatio(stream: stream, capacity: 200, warmUp: 20_000))
    }

    /// The most hits any cache of `capacity` can have on `stream` (counting from `warmUp`):
    /// every choice tried on every miss — store the key or not, and evict which entry.
    func bruteForceOptimum(_ stream: [Int32], capacity: Int, warmUp: Int) -> Int {
        var memo: [String: Int] = [:]
        func best(_ position: Int, _ cached: Set<Int32>) -> Int {
            guard position < stream.count else { return 0 }
            let memoKey = "\(position):\(cached.sorted())"
            if let known = memo[memoKey] { return known }
            let key = stream[position]
            let result: Int
            if cached.contains(key) {
                result = (position >= warmUp ? 1 : 0) + best(position + 1, cached)
            } else {
                var options = [best(position + 1, cached)]
                if cached.count < capacity {
                    options.append(best(position + 1, cached.union([key])))
                } else {
                    for victim in cached {
                        var next = cached
                        next.remove(victim)
                        next.insert(key)
                        options.append(best(position + 1, next))
                    }
                }
                result = options.max()!
            }
            memo[memoKey] = result
            return result
        }
        return best(0, [])
    }

    @Test("Belady's hit ratio is the true optimum on small streams", arguments: 1...20)
    func beladyIsOptimal(seed: Int) {
        var generator = SeededGenerator(seed: UInt64(seed))
        let length = 14
        let stream = (0..<length).map { _ in Int32(generator.next() % 6) }
        for capacity in 1...3 {
            let warmUp = seed % 4
            let hits = bruteForceOptimum(stream, capacity: capacity, warmUp: warmUp)
            let ratio = beladyHitRatio(stream: stream, capacity: capacity, warmUp: warmUp)
            #expect(
                ratio == Double(hits) / Double(length - warmUp),
                "stream \(stream), capacity \(capacity): \(ratio) vs \(hits) hits")
        }
    }

    @Test("Belady on a hand-worked stream: 1 2 3 1 2 3 1 2 in two slots")
    func beladyByHand() {
        // 1, 2 stored. 3 is wanted again at 5, after 1 (at 3) and 2 (at 4): not stored.
        // 1 hit, 2 hit. 3 (never wanted again): not stored. 1 hit, 2 hit.
        #expect(beladyHitRatio(stream: [1, 2, 3, 1, 2, 3, 1, 2], capacity: 2, warmUp: 0) == 4.0 / 8)
        #expect(beladyHitRatio(stream: [1, 2, 3, 1, 2, 3, 1, 2], capacity: 2, warmUp: 4) == 3.0 / 4)
        #expect(beladyHitRatio(stream: [5, 5, 5], capacity: 0, warmUp: 0) == 0)
    }

    @Test("the cache scenario is registered with baton bench")
    func registered() {
        #expect(allScenarios.contains { $0.name == "cache" })
    }

    @Test("Zipf samples stay in range and favour low keys")
    func zipf() {
        let distribution = ZipfDistribution(keys: 1_000, exponent: 0.99)
        let stream = distribution.stream(length: 20_000, seed: 1)
        #expect(stream.allSatisfy { (0..<1_000).contains($0) })
        let top = stream.filter { $0 < 10 }.count
        let bottom = stream.filter { $0 >= 990 }.count
        #expect(top > 10 * bottom)
    }

    @Test("a scan-polluted stream holds its scans of cold keys, each read once")
    func scans() {
        let stream = scanPollutedStream(
            ZipfDistribution(keys: 100, exponent: 0.9), keys: 100, length: 1_000, period: 50, scanLength: 25, seed: 3)
        #expect(stream.count == 1_000)
        let cold = stream.filter { $0 >= 100 }
        #expect(cold.count == 1_000 / 75 * 25 + min(25, max(0, 1_000 % 75 - 50)))
        #expect(Set(cold).count == cold.count)
    }
}
