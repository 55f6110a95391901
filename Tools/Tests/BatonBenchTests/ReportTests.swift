import Foundation
import Testing

@testable import BatonBench

@Suite struct ReportTests {
    @Test func medianAndWorstFollowTheUnit() {
        let times = BenchResult(
            case: "c", contender: "x", baton: true, unit: Unit.nanosecondsPerOperation, samples: [5, 1, 3, 9])
        #expect(times.median == 4)
        #expect(times.worst == 9)
        let ratios = BenchResult(case: "c", contender: "x", baton: true, unit: Unit.hitRatio, samples: [0.5, 0.7, 0.6])
        #expect(ratios.median == 0.6)
        #expect(ratios.worst == 0.5)
    }

    @Test func ratiosSayHowManyTimesBetterBatonIs() {
        let report = ScenarioReport(
            scenario: "s", cores: 2, quick: false,
            results: [
                BenchResult(
                    case: "a", contender: "Anchor", baton: false, unit: Unit.nanosecondsPerOperation,
                    samples: [100, 200]),
                BenchResult(
                    case: "a", contender: "Other", baton: false, unit: Unit.nanosecondsPerOperation, samples: [400]),
                BenchResult(
                    case: "a", contender: "Baton", baton: true, unit: Unit.nanosecondsPerOperation, samples: [50, 50]),
                BenchResult(case: "h", contender: "Anchor", baton: false, unit: Unit.hitRatio, samples: [0.4]),
                BenchResult(case: "h", contender: "Baton", baton: true, unit: Unit.hitRatio, samples: [0.6]),
            ])
        let table = ReportTable(report).render()
        let line = { (prefix: String) in table.split(separator: "\n").filter { $0.hasPrefix(prefix) }.map(String.init) }
        // Anchor median 150 ÷ Baton 50 = 3; worst 200 ÷ 50 = 4.
        #expect(line("Baton vs Anchor").first?.hasSuffix("3.00× (4.00×)") == true)
        #expect(line("Baton vs Other").first?.hasSuffix("8.00× (8.00×)") == true)
        #expect(line("Baton vs best anchor").first?.hasSuffix("3.00× (4.00×)") == true)
        // Hit ratios: higher is better, so the ratio is Baton ÷ anchor.
        #expect(line("Baton vs Anchor").last?.hasSuffix("1.50× (1.50×)") == true)
    }

    @Test func unknownScenarioIsAClearError() {
        #expect(throws: BenchRunner.UnknownScenario.self) { try BenchRunner.scenarios(named: ["nope"]) }
        #expect((try? BenchRunner.scenarios(named: []))?.count == allScenarios.count)
        let error = BenchRunner.UnknownScenario(name: "nope")
        #expect(error.description.contains("locks"))
    }

    @Test func reportsWrittenAsJSONReadBackTheSame() throws {
        // `baton bench` runs each scenario in a process of its own and reads its report back.
        let reports = [
            ScenarioReport(
                scenario: "locks", cores: 2, quick: true,
                results: [
                    BenchResult(
                        case: "3w/10r", contender: "Lock", baton: true, unit: Unit.nanosecondsPerOperation,
                        samples: [41.25, 55.5])
                ], notes: ["a note with \"quotes\" and a/slash"]),
            ScenarioReport(
                scenario: "cache", cores: 2, quick: true,
                results: [
                    BenchResult(
                        case: "zipf 0.7", contender: "NSCache", baton: false, unit: Unit.hitRatio, samples: [0.349])
                ]),
        ]
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("baton-report-\(UUID()).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try BenchRunner.writeJSON(reports, to: path)
        #expect(try BenchRunner.readJSON(from: path) == reports)
    }

    @Test func chartsGetOneFilePerScenarioWhenSeveralRun() {
        #expect(BenchRunner.chartPath("/tmp/out/chart.svg", scenario: "locks") == "/tmp/out/chart-locks.svg")
        #expect(BenchRunner.chartPath("chart", scenario: "cache").hasSuffix("chart-cache.svg"))
    }

    @Test func formattingIsFixedPoint() {
        #expect(formatted(3.14159, digits: 2) == "3.14")
        #expect(formatted(1234.5, digits: 0) == "1234" || formatted(1234.5, digits: 0) == "1235")
        #expect(formatted(0.5, digits: 3) == "0.500")
    }
}
