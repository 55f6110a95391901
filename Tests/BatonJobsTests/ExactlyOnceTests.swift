import BatonInternals
import BatonJobs
import BatonLocks
import BatonTestSupport
import Foundation
import Testing

/// Every job reaches exactly one finished state, every body runs at most once and only after
/// its dependencies finished, on a large random graph with cancellations and failures.
@Suite(.offTheCooperativePool) struct ExactlyOnceTests {
    /// 100,000 jobs, in the plain run and under ThreadSanitizer alike (about 40 s there on
    /// 2 cores). `BATON_STRESS_JOBS=n` changes the size, for a longer soak or a quick look.
    static let jobCount: Int = {
        if let value = ProcessInfo.processInfo.environment["BATON_STRESS_JOBS"], let count = Int(value), count > 0 {
            return count
        }
        return 100_000
    }()

    /// The deterministic part of the plan: which jobs fail, which are cancelled before they
    /// are added, which dependencies each has and its policy.
    struct Plan {
        var dependencies: [[Int]] = []
        var fails: [Bool] = []
        var cancelledEarly: [Bool] = []
        var runsAnyway: [Bool] = []

        init(count: Int, seed: UInt64) {
            var random = SplitMix64(seed: seed)
            for index in 0..<count {
                var deps: [Int] = []
                if index > 0 {
                    for _ in 0..<Int.random(in: 0...3, using: &random) {
                        // Mostly recent jobs, so chains form while earlier ones still run.
                        let back = Int.random(
                            in: 1...min(index, Bool.random(using: &random) ? 64 : index), using: &random)
                        deps.append(index - back)
                    }
                }
                dependencies.append(deps)
                fails.append(Int.random(in: 0..<100, using: &random) < 3)
                cancelledEarly.append(Int.random(in: 0..<100, using: &random) < 2)
                runsAnyway.append(Int.random(in: 0..<100, using: &random) < 30)
            }
        }

        /// The outcome each job must have, worked out in index order (a topological order).
        func expectedOutcomes() -> [String] {
            var outcomes: [String] = []
            for index in dependencies.indices {
                if cancelledEarly[index] {
                    outcomes.append("cancelled")
                } else if !runsAnyway[index], dependencies[index].contains(where: { outcomes[$0] != "succeeded" }) {
                    outcomes.append("cancelled")
                } else {
                    outcomes.append(fails[index] ? "failed" : "succeeded")
                }
            }
            return outcomes
        }
    }

    /// Per-job counters the bodies and handlers write to.
    final class Record: Sendable {
        let runs: Protected<[Int]>
        let completions: Protected<[Int]>
        let early: Protected<[Int]>  // bodies that started before a dependency finished
        init(_ count: Int) {
            runs = Protected(Array(repeating: 0, count: count))
            completions = Protected(Array(repeating: 0, count: count))
            early = Protected([])
        }
    }

    @Test(arguments: [1, 2, 8])
    func randomGraphWithCancelsAndFailures(maxConcurrentJobs: Int) throws {
        let count = Self.jobCount
        let plan = Plan(count: count, seed: UInt64(maxConcurrentJobs) * 7919)
        let record = Record(count)
        let queue = JobQueue(name: "exactly-once-\(maxConcurrentJobs)", maxConcurrentJobs: maxConcurrentJobs)
        let jobs = Protected<[Job]>([])
        var local: [Job] = []
        local.reserveCapacity(count)
        for index in 0..<count {
            let fails = plan.fails[index]
            let job = BlockJob(name: "job\(index)") {
                record.runs.write { $0[index] += 1 }
                let dependencies = jobs.read { all in plan.dependencies[index].map { all[$0] } }
                if dependencies.contains(where: { !$0.isFinished }) { record.early.write { $0.append(index) } }
                if fails { throw TestError(id: index) }
            }
            if plan.runsAnyway[index] { job.dependencyFailurePolicy = .run }
            for dependency in plan.dependencies[index] { try job.addDependency(local[dependency]) }
            if index % 2 == 0 {
                job.completion = { _ in record.completions.write { $0[index] += 1 } }
            }
            if plan.cancelledEarly[index] { job.cancel() }
            local.append(job)
        }
        jobs.write { $0 = local }
        // Added in batches while earlier batches run, so adding races with finishing.
        for start in stride(from: 0, to: count, by: 1000) {
            try queue.add(Array(local[start..<min(start + 1000, count)]))
        }
        #expect(drain(queue))
        #expect(queue.jobCount == 0)

        let expected = plan.expectedOutcomes()
        let actual = local.map { $0.state.tag }
        let mismatches = zip(expected, actual).enumerated().filter { $0.element.0 != $0.element.1 }
        #expect(
            mismatches.isEmpty,
            "first mismatches: \(mismatches.prefix(5).map { "job\($0.offset): expected \($0.element.0), got \($0.element.1)" })"
        )
        let runs = record.runs.value
        #expect(runs.allSatisfy { $0 <= 1 })
        for (index, outcome) in expected.enumerated() where (outcome == "cancelled") != (runs[index] == 0) {
            Issue.record("job\(index) is \(outcome) but its body ran \(runs[index]) times")
            break
        }
        let completions = record.completions.value
        #expect(completions.enumerated().allSatisfy { $0.offset % 2 == 0 ? $0.element == 1 : $0.element == 0 })
        #expect(
            record.early.value.isEmpty,
            "bodies started before their dependencies finished: \(record.early.value.prefix(5))")
        let succeeded = expected.filter { $0 == "succeeded" }.count
        let failed = expected.filter { $0 == "failed" }.count
        let cancelled = expected.filter { $0 == "cancelled" }.count
        #expect(succeeded + failed + cancelled == count)
        #expect(runs.reduce(0, +) == succeeded + failed)
        #expect(failed > 0 && cancelled > 0 && succeeded > 0)
    }

    /// `cancelAll` while a random graph runs: no job is lost or finished twice, whatever the
    /// timing.
    @Test(arguments: [1, 2, 8])
    func cancelAllWhileRunning(maxConcurrentJobs: Int) throws {
        let count = Self.jobCount / 5
        let plan = Plan(count: count, seed: 42 + UInt64(maxConcurrentJobs))
        let runs = Protected(Array(repeating: 0, count: count))
        let finishes = Protected(Array(repeating: 0, count: count))
        let queue = JobQueue(name: "cancel-all-\(maxConcurrentJobs)", maxConcurrentJobs: maxConcurrentJobs)
        var jobs: [Job] = []
        for index in 0..<count {
            let job = BlockJob(name: "job\(index)") {
                runs.write { $0[index] += 1 }
                if plan.fails[index] { throw TestError(id: index) }
            }
            for dependency in plan.dependencies[index] { try job.addDependency(jobs[dependency]) }
            if plan.runsAnyway[index] { job.dependencyFailurePolicy = .run }
            job.observe { state in
                if state.isFinished { finishes.write { $0[index] += 1 } }
            }
            jobs.append(job)
        }
        try queue.add(jobs)
        queue.cancelAll()
        #expect(drain(queue))
        let finished = finishes.value
        #expect(finished.allSatisfy { $0 == 1 })
        let ran = runs.value
        #expect(ran.allSatisfy { $0 <= 1 })
        let outcomes = jobs.map { $0.state.tag }
        #expect(outcomes.allSatisfy { ["succeeded", "failed", "cancelled"].contains($0) })
        // A job that finished any other way than cancelled ran its body, exactly once.
        let ranButNotCancelled = zip(outcomes, ran).filter { $0.0 != "cancelled" && $0.1 != 1 }
        #expect(ranButNotCancelled.isEmpty)
    }
}
