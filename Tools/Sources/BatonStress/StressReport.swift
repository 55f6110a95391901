import BatonTesting

/// The summary `baton stress` prints: a table with one row per structure, then the violations
/// found, described.
///
/// ```
/// structure        operations       ops/s  histories  undecided  violations  time
/// protected           312,400     220,563        101          0           0  1.4 s
/// ```
///
/// Thread safety: a plain value; `Sendable`.
public struct StressReport: Sendable {
    /// The results, in the order they ran.
    public let results: [StressResult]

    /// Creates the report of `results`.
    public init(_ results: [StressResult]) {
        self.results = results
    }

    /// Whether every run found no violation.
    public var passed: Bool { results.allSatisfy(\.passed) }

    /// The violations found, over every run.
    public var violationCount: Int { results.reduce(0) { $0 + $1.violationCount } }

    /// The table, one row per structure.
    public func table() -> String {
        alignedTable(
            header: ["structure", "operations", "ops/s", "histories", "undecided", "violations", "time"],
            rows: results.map { result in
                [
                    result.name, formatCount(result.operations),
                    formatCount(Int(result.operationsPerSecond.rounded())), formatCount(result.historiesChecked),
                    formatCount(result.undecidedHistories), formatCount(result.violationCount),
                    formatSeconds(result.elapsed),
                ]
            })
    }

    /// The contention of the named Baton locks each run took, one row per (structure, lock
    /// name); empty when no run took a named lock.
    public func lockContention() -> String {
        let rows = results.flatMap { result in
            result.lockStatistics.map { lock in
                [
                    result.name, lock.name, formatCount(lock.locks), formatCount(lock.acquisitions),
                    formatPercent(lock.contentionRatio), formatMilliseconds(lock.totalWait),
                ]
            }
        }
        guard !rows.isEmpty else { return "" }
        return alignedTable(
            header: ["structure", "lock", "locks", "acquisitions", "contended", "waiting"], rows: rows, leftColumns: 2)
    }

    /// Each violation kept, under the structure that found it; empty when there were none.
    public func violationDetails() -> String {
        var lines: [String] = []
        for result in results where !result.passed {
            let more = result.violationCount - result.violations.count
            lines.append(
                "\(result.name): \(result.violationCount) violation\(result.violationCount == 1 ? "" : "s")"
                    + (more > 0 ? " (the first \(result.violations.count) shown)" : ""))
            for violation in result.violations {
                lines.append(
                    violation.split(separator: "\n", omittingEmptySubsequences: false)
                        .enumerated().map { $0 == 0 ? "  - \($1)" : "    \($1)" }.joined(separator: "\n"))
            }
        }
        return lines.joined(separator: "\n")
    }

    /// The table, the lock contention, then the violations if any, then a one-line verdict.
    public func render() -> String {
        var parts = [table()]
        let contention = lockContention()
        if !contention.isEmpty { parts.append("lock contention (named Baton locks)\n" + contention) }
        let details = violationDetails()
        if !details.isEmpty { parts.append(details) }
        parts.append(
            passed
                ? "no violations"
                : "\(violationCount) violation\(violationCount == 1 ? "" : "s") in "
                    + results.filter { !$0.passed }.map(\.name).joined(separator: ", "))
        return parts.joined(separator: "\n\n")
    }
}

/// Rows of cells as aligned text columns, two spaces apart: the first `leftColumns` columns
/// (names) left-aligned, the rest (numbers) right-aligned.
func alignedTable(header: [String], rows: [[String]], leftColumns: Int = 1) -> String {
    let widths = header.indices.map { column in
        ([header] + rows).map { $0[column].count }.max() ?? 0
    }
    func line(_ cells: [String]) -> String {
        cells.enumerated().map { column, cell in
            let padding = String(repeating: " ", count: widths[column] - cell.count)
            return column < leftColumns ? cell + padding : padding + cell
        }
        .joined(separator: "  ")
    }
    return ([line(header)] + rows.map(line)).joined(separator: "\n")
}

/// A ratio from 0 to 1 as a percentage with one decimal: `12.5%`.
func formatPercent(_ ratio: Double) -> String {
    let tenths = Int((ratio * 1000).rounded())
    return "\(tenths / 10).\(tenths % 10)%"
}

/// A duration in milliseconds with two decimals: `3.07 ms`.
func formatMilliseconds(_ duration: Duration) -> String {
    let hundredths = Int((duration.seconds * 100_000).rounded())
    return "\(hundredths / 100).\(format2(hundredths % 100)) ms"
}

/// `1234567` as `1,234,567`.
func formatCount(_ value: Int) -> String {
    let digits = String(value.magnitude)
    var grouped = ""
    for (offset, digit) in digits.enumerated() {
        if offset > 0 && (digits.count - offset) % 3 == 0 { grouped.append(",") }
        grouped.append(digit)
    }
    return value < 0 ? "-" + grouped : grouped
}

/// A duration as seconds with one decimal, or two below one second: `1.4 s`, `0.25 s`.
func formatSeconds(_ duration: Duration) -> String {
    let seconds = duration.seconds
    let hundredths = Int((seconds * 100).rounded())
    if seconds < 1 { return "\(hundredths / 100).\(String(format2(hundredths % 100))) s" }
    let tenths = Int((seconds * 10).rounded())
    return "\(tenths / 10).\(tenths % 10) s"
}

private func format2(_ value: Int) -> String {
    value < 10 ? "0\(value)" : "\(value)"
}
