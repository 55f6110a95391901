import Testing

@testable import BatonBench

@Suite("Cache scenario")
struct CacheScenarioTests {
    @Test("a tiny run measures every case for every contender, with sane values")
    func tinyRun() throws {
        let report = CacheScenario().run(BenchOptions(quick: true, reps: 1, scale: 0.001), progress: .silent)
        #expect(report.scenario == "cache")
        #expect(report.quick)

        let timedCases = ["90/10 ×1", "90/10 ×2", "50/50 ×1", "50/50 ×2"]
        let ratioCases = ["zipf 0.7", "zipf 0.9", "zipf 1.1", "zipf 0.9 + scans"]
        for contender in CacheContender.all {
            for name in timedCases {
                let row = try #require(report.result(case: name, contender: contender.name))
                #expect(row.unit == Unit.nanosecondsPerOperation)
                #expect(row.median > 0 && row.median.isFinite)
                #expect(row.worst >= row.median)
                #expect(row.baton == contender.baton)
                #expect(row.reps == 1)
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
        let bounded = CacheContender.all.filter(\.bounded).count
        #expect(report.results.count == CacheContender.all.count * timedCases.count + bounded * ratioCases.count)
        #expect(CacheContender.all.contains { $0.baton } && CacheContender.all.contains { !$0.baton })
        #expect(try report.jsonLine().contains("\"scenario\":\"cache\""))
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
