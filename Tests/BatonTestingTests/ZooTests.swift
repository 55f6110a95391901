import BatonTestSupport
import BatonTesting
import Testing

/// Each bug of the zoo is found with the default budget (the hang with a one-second budget),
/// and each correct version passes. One check at a time: a check's threads want the cores.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct ZooTests {
    /// Real threads race only while both run at once: on a machine busy with other work a
    /// check can spend its budget with one thread descheduled. Up to five checks, each with the
    /// exhibit's budget; the first that finds the bug ends the test.
    @Test(arguments: Zoo.bugs)
    func bugIsFound(_ exhibit: Exhibit) async throws {
        var report = try await exhibit.check(exhibit.budget)
        for _ in 1..<5 where report.outcome != exhibit.expected {
            report = try await exhibit.check(exhibit.budget)
        }
        print(report)
        #expect(report.outcome == exhibit.expected)
        #expect(report.failingSeed != nil)
    }

    @Test(arguments: Zoo.correct)
    func correctVersionPasses(_ exhibit: Exhibit) async throws {
        let report = try await exhibit.check(exhibit.budget)
        #expect(report.outcome == .passed, "\(report)")
    }

    @Test func lostWakeUpIsReportedAsAHangOfTheStuckOperation() throws {
        let check = Zoo.permitCounterCheck { HandRolledSemaphore() }
        var report = try check.run(budget: Zoo.hangBudget)
        for _ in 1..<5 where report.outcome != .hung {
            report = try check.run(budget: Zoo.hangBudget)
        }
        print(report)
        #expect(report.outcome == .hung)
        #expect(!report.hungOperations.isEmpty)
        // Every operation takes the permit, so whichever was stuck waited for it.
        #expect(report.hungOperations.allSatisfy { ["increment", "read"].contains($0.text) })
        #expect(report.description.contains("never returned"))
    }
}

/// The detection table: set `BATON_DETECTION_RUNS` (and `BATON_FALSE_REPORT_RUNS`) to run it;
/// see `DetectionTable`. Off by default: at 100 and 1,000 runs it takes about half an hour.
@Suite(.serialized, .timeLimit(.minutes(60)))
struct DetectionTableTests {
    @Test func zoo() async throws {
        guard let runs = DetectionTable.detectionRuns else { return }
        let table = try await DetectionTable.measure(
            (Zoo.bugs + Zoo.correct).map(\.row), bugRuns: runs, correctRuns: DetectionTable.falseReportRuns)
        print("The zoo:\n\(table)")
    }
}
