import Foundation
import Testing

@testable import BatonBench

/// The futures scenario at a tiny size: every case has every contender it should, with sane
/// numbers. Nothing here judges speed.
@Suite struct FuturesScenarioTests {
    /// Runs the scenario on a thread of its own: it blocks while it measures, and its TaskGroup
    /// contenders need Swift's cooperative pool to be free.
    static func runQuick() async throws -> ScenarioReport {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(
                    with: Result {
                        try FuturesScenario().run(BenchOptions(quick: true, reps: 1, scale: 0.001), progress: .silent)
                    })
            }.start()
        }
    }

    @Test func everyCaseHasItsContenders() async throws {
        let report = try await Self.runQuick()
        #expect(report.scenario == "futures")
        #expect(report.cases.count == 7)
        let byCase = Dictionary(grouping: report.results, by: \.case).mapValues { Set($0.map(\.contender)) }
        let nio: Set<String> = ["NIO EventLoopPromise"]
        #expect(byCase["create+observe+resolve"] == nio.union(["Future"]))
        #expect(byCase["all, 100 immediate: join"] == nio.union(["Future", "DispatchGroup"]))
        #expect(byCase["all, 100 immediate: make + join"] == nio.union(["Future", "DispatchGroup", "TaskGroup"]))
        #expect(byCase["all, 100 async"] == nio.union(["Future", "DispatchGroup", "TaskGroup"]))
        #expect(byCase["chain of 100 maps"] == nio.union(["Future"]))
        let failFast = report.results.filter { $0.case.hasPrefix("fail fast") }
        #expect(failFast.count == 6)
        for result in report.results {
            #expect(result.median > 0 && result.median.isFinite)
            #expect(result.baton == (result.contender == "Future"))
        }
        // The waits are real: whatever reports the failure cannot beat the failing operation
        // (10 ms in a quick run), and async let waits for the slow one (200 ms).
        for result in failFast {
            #expect(result.median >= 10)
            if result.contender == "async let" { #expect(result.median >= 200) }
        }
        #expect(
            report.notes.contains {
                $0.contains("one small object per input (the least a future that is an object costs) takes")
            })
        let table = ReportTable(report).render()
        #expect(table.contains("Future vs NIO EventLoopPromise"))
    }
}
