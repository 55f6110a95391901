import BatonLocks
import BatonStress
import Foundation
import Testing

/// The runner's lock watch switches process-wide diagnostics, so it is tested in a child
/// process of its own (an exit test), where no other test shares those switches.
@Suite struct LockWatchTests {
    @Test("A lock inversion inside a run is a violation of that run; named locks report their contention")
    func inversionIsAViolationAndStatisticsAreKept() async {
        await #expect(processExitsWith: .success) {
            let target = StressTarget(name: "abba", summary: "takes two locks in both orders") { options in
                let a = Lock(name: "watch.a")
                let b = Lock(name: "watch.b")
                for order in [(a, b), (b, a)] {
                    let done = DispatchSemaphore(value: 0)
                    Thread {
                        order.0.withLock { order.1.withLock {} }
                        done.signal()
                    }.start()
                    done.wait()
                }
                return StressResult(
                    name: "abba", threads: 2, operations: 4, historiesChecked: 1, undecidedHistories: 0,
                    violationCount: 0, violations: [], elapsed: .milliseconds(1))
            }
            let runner = StressRunner(totalDuration: .milliseconds(10), threads: 2)
            let result = runner.run([target])[0]
            let checks = [
                result.violationCount == 1,
                result.violations.count == 1,
                result.violations.first?.contains("lock-order inversion") == true,
                result.violations.first?.contains("\"watch.a\"") == true,
                Set(result.lockStatistics.map(\.name)) == ["watch.a", "watch.b"],
                result.lockStatistics.allSatisfy { $0.acquisitions == 2 && $0.locks == 1 },
                !StressReport([result]).passed,
                StressReport([result]).lockContention().contains("watch.b"),
            ]
            exit(checks.allSatisfy { $0 } ? EXIT_SUCCESS : EXIT_FAILURE)
        }
    }

    @Test("Every structure's run finds no lock inversion and counts its named locks")
    func realRunsAreWatched() async {
        await #expect(processExitsWith: .success) {
            let runner = StressRunner(totalDuration: .milliseconds(1_400), threads: 4, roundOperations: 200)
            let results = runner.run(StressTarget.all)
            let named = Set(results.flatMap { $0.lockStatistics.map(\.name) })
            let checks = [
                results.allSatisfy(\.passed),
                named.isSuperset(of: [
                    "stress.lock", "stress.rwlock", "MemoryCache.shard", "JobQueue.graph", "stress.async-lock",
                ]),
                results.first { $0.name == "cache" }?.lockStatistics.contains { $0.name == "MemoryCache.shard" }
                    == true,
            ]
            exit(checks.allSatisfy { $0 } ? EXIT_SUCCESS : EXIT_FAILURE)
        }
    }
}
