import BatonBench
import Foundation
import Testing

/// The async scenario at a tiny size: every case has a row for each of its contenders, with
/// positive times, the Baton rows are marked, and the table has a ratio for each. Nothing here
/// judges speed.
@Suite(.timeLimit(.minutes(1)))
struct AsyncScenarioTests {
    static let expected: [(case: String, contenders: [String])] = [
        ("semaphore, 1 task", ["AsyncSemaphore", "actor semaphore"]),
        ("semaphore, 8 tasks, width 2", ["AsyncSemaphore", "actor semaphore"]),
        ("semaphore, 64 tasks, width 4", ["AsyncSemaphore", "actor semaphore"]),
        ("lock, uncontended", ["AsyncLock", "actor call"]),
        ("lock, 16 tasks, await inside", ["AsyncLock", "actor semaphore"]),
        ("timed semaphore wait, 8 tasks, width 2", ["wait(timeout:)", "wait()"]),
        ("timed lock, 16 tasks, await inside", ["withLock(timeout:)", "withLock"]),
        (
            "concurrentMap, 10,000 elements, width 8",
            ["concurrentMap", "task group + AsyncSemaphore", "unbounded task group"]
        ),
        ("Lazy read", ["Lazy", "static let", "NSLock + optional"]),
        ("AsyncLazy read, async call", ["AsyncLazy", "static let", "NSLock + optional"]),
        ("AsyncLazy read, inline", ["AsyncLazy", "NSLock + optional"]),
        ("RateLimiter, 10,000 permits/s over 0.2 s", ["RateLimiter"]),
    ]

    static let batonContenders = [
        "AsyncSemaphore", "AsyncLock", "Lazy", "AsyncLazy", "concurrentMap", "wait(timeout:)", "withLock(timeout:)",
        "RateLimiter",
    ]

    /// Runs the scenario on a thread of its own: it blocks its caller while its tasks run on the
    /// cooperative pool, whose threads a blocked test would take.
    static func tinyRun() async -> ScenarioReport {
        await withCheckedContinuation { continuation in
            Thread {
                let report = AsyncScenario().run(BenchOptions(quick: true, reps: 2, scale: 0.0005), progress: .silent)
                continuation.resume(returning: report)
            }.start()
        }
    }

    @Test func everyCaseHasItsContendersWithRatiosJSONAndChart() async throws {
        let report = await Self.tinyRun()
        #expect(report.scenario == "async")
        #expect(report.cases == Self.expected.map(\.case))
        #expect(report.results.count == Self.expected.map(\.contenders.count).reduce(0, +))
        for (name, contenders) in Self.expected {
            for contender in contenders {
                guard let row = report.result(case: name, contender: contender) else {
                    Issue.record("missing row \(name) / \(contender)")
                    continue
                }
                #expect(row.unit == (contender == "RateLimiter" ? Unit.ofConfiguredRate : "ns/op"))
                #expect(row.median > 0 && row.median.isFinite && row.worst >= row.median, "\(name) / \(contender)")
                #expect(row.reps == 2)
                #expect(row.baton == Self.batonContenders.contains(contender))
                // The limiter never grants more than its burst plus its rate: its ratio is at most 1.
                if contender == "RateLimiter" { #expect(row.median <= 1.000_001) }
            }
        }
        #expect(allScenarios.contains { $0.name == "async" })

        let table = ReportTable(report).render()
        for ratio in [
            "AsyncSemaphore vs actor semaphore", "AsyncLock vs actor call", "AsyncLock vs actor semaphore",
            "Lazy vs static let", "Lazy vs NSLock + optional", "AsyncLazy vs static let",
            "AsyncLazy vs NSLock + optional", "concurrentMap vs task group + AsyncSemaphore",
            "concurrentMap vs unbounded task group",
        ] {
            #expect(table.contains(ratio), "no ratio row \(ratio)")
        }
        let decoded = try JSONDecoder().decode(ScenarioReport.self, from: Data(try report.jsonLine().utf8))
        #expect(decoded == report)
        let svg = BarChart(report).render()
        #expect(svg.hasPrefix("<svg") && svg.components(separatedBy: "<title>").count - 1 == report.results.count)
    }
}
