import BatonLocks
import BatonStress
import Testing

@Suite struct StressReportTests {
    static func result(_ name: String, violations: [String] = [], count: Int? = nil) -> StressResult {
        StressResult(
            name: name, threads: 8, operations: 1_234_567, historiesChecked: 42, undecidedHistories: 1,
            violationCount: count ?? violations.count, violations: violations, elapsed: .milliseconds(1_500))
    }

    @Test func tableHasAHeaderAndARowPerStructure() {
        let report = StressReport([Self.result("lock"), Self.result("cache")])
        let lines = report.table().split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        for column in ["structure", "operations", "ops/s", "histories", "undecided", "violations", "time"] {
            #expect(lines[0].contains(column))
        }
        #expect(lines[1].hasPrefix("lock "))
        #expect(lines[1].contains("1,234,567"))
        #expect(lines[1].contains("823,045"))  // 1,234,567 operations in 1.5 s
        #expect(lines[1].hasSuffix("1.5 s"))
        #expect(lines[2].hasPrefix("cache "))
        #expect(Set(lines.map(\.count)).count == 1, "rows are aligned")
    }

    @Test func cleanReportPasses() {
        let report = StressReport([Self.result("lock")])
        #expect(report.passed)
        #expect(report.violationDetails().isEmpty)
        #expect(report.render().hasSuffix("no violations"))
    }

    @Test func violationsAreListedUnderTheirStructure() {
        let report = StressReport([
            Self.result("lock"),
            Self.result("jobs", violations: ["round 3: j1 ran twice", "round 4: j2\nsecond line"], count: 5),
        ])
        #expect(!report.passed)
        #expect(report.violationCount == 5)
        let details = report.violationDetails()
        #expect(details.contains("jobs: 5 violations (the first 2 shown)"))
        #expect(details.contains("  - round 3: j1 ran twice"))
        #expect(details.contains("  - round 4: j2\n    second line"))
        #expect(!details.contains("lock"))
        #expect(report.render().hasSuffix("5 violations in jobs"))
    }

    @Test func lockContentionListsEachNamedLockUnderItsStructure() {
        var cache = Self.result("cache")
        cache.lockStatistics = [
            LockStatistics(
                name: "MemoryCache.shard", locks: 16, acquisitions: 2_000, contendedAcquisitions: 250,
                totalWait: .microseconds(3_070))
        ]
        let report = StressReport([Self.result("lock"), cache])
        let lines = report.lockContention().split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(lines[0].hasPrefix("structure") && lines[0].contains("contended"))
        #expect(lines[1].hasPrefix("cache "))
        #expect(lines[1].contains("MemoryCache.shard"))
        #expect(lines[1].contains("2,000") && lines[1].contains("12.5%") && lines[1].hasSuffix("3.07 ms"))
        #expect(report.render().contains("lock contention"))
        #expect(StressReport([Self.result("lock")]).lockContention().isEmpty)
    }
}
