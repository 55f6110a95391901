import Testing

@testable import BatonBench

@Suite(.timeLimit(.minutes(2))) struct HTTPScenarioTests {
    /// The http scenario at a tiny size against its own server: every case has a throughput, a
    /// p50 and a p99 row for every contender, in their units and with positive values (a round
    /// in which a body arrived short would have stopped the scenario), the Baton rows are
    /// marked, and the findings give both ratios for every case.
    @Test func everyCaseAndContenderIsMeasured() throws {
        let report = try HTTPScenario().run(BenchOptions(quick: true, reps: 1, scale: 0.0001), progress: .silent)
        #expect(report.scenario == "http")
        let contenders = [
            "AsyncHTTPClient loop", "AsyncHTTPClient callback loop", "HTTPClientTransport alone",
            "Fetcher/AsyncHTTPClient", "Fetcher/URLSession",
        ]
        #expect(report.contenders == contenders)
        let loads = ["1 × 1 KB", "16 × 1 KB", "64 × 1 KB", "1 × 1 MB", "16 × 1 MB", "64 × 1 MB"]
        #expect(report.cases == loads.flatMap { [$0, "\($0) p50", "\($0) p99"] })
        for load in loads {
            for contender in contenders {
                for (name, unit) in [(load, "req/s"), ("\(load) p50", "ms"), ("\(load) p99", "ms")] {
                    guard let row = report.result(case: name, contender: contender) else {
                        Issue.record("missing row \(name) / \(contender)")
                        continue
                    }
                    #expect(row.unit == unit)
                    #expect(row.median > 0, "\(name) / \(contender)")
                    #expect(row.baton == !contender.hasPrefix("AsyncHTTPClient"))
                }
                let p50 = report.result(case: "\(load) p50", contender: contender)?.median ?? 0
                let p99 = report.result(case: "\(load) p99", contender: contender)?.median ?? 0
                #expect(p50 <= p99, "\(load) / \(contender)")
            }
        }
        let findings = report.notes.filter { $0.hasPrefix("Fetcher/AsyncHTTPClient ÷") }
        #expect(findings.count == 3)
        for finding in findings {
            #expect(loads.allSatisfy { finding.contains("\($0) ") }, "\(finding)")
        }
        #expect(allScenarios.contains { $0.name == "http" })
    }

    @Test func percentilesAreByNearestRank() {
        let round = HTTPLoad.Round(elapsed: .seconds(2), latencies: (1...100).reversed().map { .milliseconds($0) })
        #expect(round.percentile(50) == 50)
        #expect(round.percentile(99) == 99)
        #expect(round.percentile(100) == 100)
        #expect(round.requestsPerSecond == 50)
        let one = HTTPLoad.Round(elapsed: .seconds(1), latencies: [.milliseconds(7)])
        #expect(one.percentile(50) == 7 && one.percentile(99) == 7)
    }
}
