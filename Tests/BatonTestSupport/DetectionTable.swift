import BatonTesting
import Foundation

/// How reliably linearizability checks find what they should: each buggy type's check run many
/// times with the budget it has in the tests, each correct type's check run many times more,
/// counted and printed as a Markdown table.
///
/// Off unless asked for, it takes minutes: `BATON_DETECTION_RUNS` is the runs per buggy type,
/// `BATON_FALSE_REPORT_RUNS` the runs per correct type (1,000 if unset), and
/// `BATON_DETECTION_ONLY`, if set, runs only the rows whose type contains it. Build in release
/// first:
///
/// ```sh
/// swift build -c release --build-tests --traits Macros
/// BATON_DETECTION_RUNS=100 BATON_FALSE_REPORT_RUNS=1000 \
///     swift test -c release --skip-build --traits Macros --filter DetectionTable
/// ```
public enum DetectionTable {
    /// One type and its check.
    public struct Row: Sendable {
        /// The type checked.
        public var type: String
        /// The kind of bug it has; nil for a correct type.
        public var bug: String?
        /// What a run of the check should conclude: ``LinearizabilityReport/Outcome/passed`` for a
        /// correct type.
        public var expected: LinearizabilityReport.Outcome
        /// Runs the check once.
        public var check: @Sendable () async throws -> LinearizabilityReport

        public init(
            type: String, bug: String?, expected: LinearizabilityReport.Outcome,
            check: @escaping @Sendable () async throws -> LinearizabilityReport
        ) {
            self.type = type
            self.bug = bug
            self.expected = expected
            self.check = check
        }
    }

    /// Runs per buggy type, from `BATON_DETECTION_RUNS`; nil if it is unset.
    public static var detectionRuns: Int? {
        ProcessInfo.processInfo.environment["BATON_DETECTION_RUNS"].flatMap { Int($0) }
    }

    /// Runs per correct type, from `BATON_FALSE_REPORT_RUNS`; 1,000 if it is unset.
    public static var falseReportRuns: Int {
        ProcessInfo.processInfo.environment["BATON_FALSE_REPORT_RUNS"].flatMap { Int($0) } ?? 1_000
    }

    /// Only the rows whose type contains `BATON_DETECTION_ONLY`, if it is set.
    private static func selected(_ rows: [Row]) -> [Row] {
        guard let only = ProcessInfo.processInfo.environment["BATON_DETECTION_ONLY"] else { return rows }
        return rows.filter { $0.type.contains(only) }
    }

    private struct Tally {
        var runs = 0
        var hits = 0
        var roundsToDetection: [Int] = []
        var seconds: [Double] = []
        var unexpected: [LinearizabilityReport] = []
    }

    /// Runs every row's check, one run at a time, and returns the table: for each buggy type
    /// how often its check found the bug, for each correct type how often the check reported
    /// something anyway.
    public static func measure(_ rows: [Row], bugRuns: Int, correctRuns: Int) async throws -> String {
        var bugLines = [
            "| Type | Bug | Runs | Detected | Median rounds to detection | Median s per check | Max s per check |",
            "|---|---|---:|---:|---:|---:|---:|",
        ]
        var correctLines = [
            "| Correct type | Runs | False reports | Median s per check | Max s per check |",
            "|---|---:|---:|---:|---:|",
        ]
        var notes: [String] = []
        for row in selected(rows) {
            var tally = Tally()
            for _ in 0..<(row.bug == nil ? correctRuns : bugRuns) {
                let report = try await row.check()
                tally.runs += 1
                tally.seconds.append(
                    Double(report.elapsed.components.seconds) + Double(report.elapsed.components.attoseconds) / 1e18)
                if report.outcome == row.expected {
                    tally.hits += 1
                    if row.bug != nil { tally.roundsToDetection.append(report.rounds) }
                } else if tally.unexpected.count < 2 {
                    tally.unexpected.append(report)
                }
            }
            let medianSeconds = format(median(tally.seconds))
            let maxSeconds = format(tally.seconds.max() ?? 0)
            let line: String
            if let bug = row.bug {
                let rounds = median(tally.roundsToDetection.map(Double.init))
                line =
                    "| \(row.type) | \(bug) | \(tally.runs) | \(tally.hits) | \(Int(rounds.rounded())) | "
                    + "\(medianSeconds) | \(maxSeconds) |"
                bugLines.append(line)
            } else {
                line = "| \(row.type) | \(tally.runs) | \(tally.runs - tally.hits) | \(medianSeconds) | \(maxSeconds) |"
                correctLines.append(line)
            }
            // Each row as it is done: a long run that is stopped still says what it measured.
            print("detection row: \(line)")
            fflush(nil)  // every stream: the rows show even when the output is a file
            for report in tally.unexpected {
                notes.append("\(row.type), a run that missed:\n\(report)")
            }
        }
        // A table without rows (no buggy or no correct type measured) is left out.
        var sections: [[String]] = []
        if bugLines.count > 2 { sections.append(bugLines) }
        if correctLines.count > 2 { sections.append(correctLines) }
        if !notes.isEmpty { sections.append(notes) }
        return sections.map { $0.joined(separator: "\n") }.joined(separator: "\n\n")
    }

    private static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count.isMultiple(of: 2) ? (sorted[middle - 1] + sorted[middle]) / 2 : sorted[middle]
    }

    private static func format(_ seconds: Double) -> String {
        String(format: "%.3f", seconds)
    }
}
