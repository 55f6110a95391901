import BatonStress
import Foundation
import Testing

/// Every stress run at a tiny budget: it must finish by itself, do work, check histories, and
/// find nothing wrong with Baton.
@Suite struct StressRunTests {
    /// A burst counts as hung after 45 s, not the command line's 20: the async targets' tasks
    /// need the cooperative pool, two threads on the CI machine, and while the rest of the suite
    /// starts its synchronous tests beside them they can wait most of the suite's first minute
    /// for one. A burst that really hangs still never finishes.
    static let options = StressOptions(
        duration: .milliseconds(200), threads: 4, roundOperations: 200, hangTimeout: .seconds(45))

    @Test(.timeLimit(.minutes(2)), arguments: StressTarget.all.map(\.name))
    func runFindsNoViolation(name: String) async throws {
        let target = try #require(try StressTarget.named([name]).first)
        // A run blocks its caller; off the cooperative pool, so that the async targets' tasks
        // have every thread of it.
        let result = await onThread { target.run(Self.options) }
        #expect(result.name == name)
        #expect(result.threads == 4)
        #expect(result.violationCount == 0, "\(result.violations.joined(separator: "\n"))")
        #expect(result.violations.isEmpty)
        #expect(result.operations > 0)
        #expect(result.historiesChecked > 0)
        #expect(result.undecidedHistories <= result.historiesChecked)
    }

    @Test func everyStructureHasATarget() {
        #expect(
            StressTarget.all.map(\.name) == [
                "protected", "lock", "recursive-lock", "rwlock", "cache", "futures", "jobs", "async-semaphore",
                "async-lock",
            ])
    }

    @Test func targetsAreFoundByNameInTheOrderGiven() throws {
        #expect(try StressTarget.named([]).map(\.name) == StressTarget.all.map(\.name))
        #expect(try StressTarget.named(["jobs", "lock"]).map(\.name) == ["jobs", "lock"])
    }

    @Test func unknownNameListsTheValidOnes() {
        #expect(throws: UnknownStressTarget(name: "mutex")) { try StressTarget.named(["lock", "mutex"]) }
        let message = UnknownStressTarget(name: "mutex").description
        #expect(message.contains("'mutex'"))
        for target in StressTarget.all { #expect(message.contains(target.name)) }
    }

    @Test func runnerSharesTheTimeAmongTheTargets() {
        let runner = StressRunner(totalDuration: .seconds(7), threads: 6, watchesLocks: false)
        let options = runner.options(sharedBy: 7)
        #expect(options.duration == .seconds(1))
        #expect(options.threads == 6)
        #expect(runner.options(sharedBy: 2).duration == .milliseconds(3_500))
    }

    @Test func runnerReportsProgressForEachTarget() throws {
        let runner = StressRunner(
            totalDuration: .milliseconds(100), threads: 2, roundOperations: 20, watchesLocks: false)
        var lines: [String] = []
        let results = runner.run(try StressTarget.named(["lock"])) { lines.append($0) }
        #expect(results.count == 1)
        #expect(lines.count == 2)
        #expect(lines[0].contains("lock"))
        #expect(lines[1].contains("violations"))
    }
}

/// Runs `body` on a thread of its own and returns its result, without blocking the calling
/// task's thread.
func onThread<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async -> Result {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}
