import Foundation

/// Renders a scenario report as aligned text: the measurements, then Baton's ratio to each
/// anchor and to the best anchor of each case.
public struct ReportTable {
    public let report: ScenarioReport

    public init(_ report: ScenarioReport) {
        self.report = report
    }

    /// The whole table, one section per unit, ending in a newline.
    public func render() -> String {
        var out = "== \(report.scenario) — \(report.cores) cores\(report.quick ? ", quick run" : "") ==\n"
        let units = report.results.map(\.unit).uniqued()
        for unit in units {
            let cases = report.results.filter { $0.unit == unit }.map(\.case).uniqued()
            out += "\n" + measurements(unit: unit, cases: cases)
            out += "\n" + ratios(unit: unit, cases: cases)
        }
        if !report.notes.isEmpty {
            out += "\n" + report.notes.map { "- " + $0 }.joined(separator: "\n") + "\n"
        }
        return out
    }

    private func measurements(unit: String, cases: [String]) -> String {
        let reps = report.results.first { $0.unit == unit }?.reps ?? 0
        var rows = [["\(unit), median of \(reps) (worst)"] + cases]
        for contender in report.contenders {
            let cells = cases.map { name in
                report.result(case: name, contender: contender).map {
                    "\(format($0.median, unit)) (\(format($0.worst, unit)))"
                } ?? "–"
            }
            guard cells.contains(where: { $0 != "–" }) else { continue }
            let isBaton = report.results.first { $0.contender == contender }?.baton ?? false
            let mark = isBaton ? "* " : report.ceilings.contains(contender) ? "^ " : "  "
            rows.append([mark + contender] + cells)
        }
        let hasCeiling = report.ceilings.contains { name in
            report.results.contains { $0.unit == unit && $0.contender == name }
        }
        return align(rows) + "  (* Baton\(hasCeiling ? "; ^ ceiling, not an anchor" : ""))\n"
    }

    private func ratios(unit: String, cases: [String]) -> String {
        let higherIsBetter = BenchResult.higherIsBetter(unit)
        let batons = report.contenders.filter { name in report.results.contains { $0.contender == name && $0.baton } }
        let anchors = report.contenders.filter { name in
            !report.ceilings.contains(name) && report.results.contains { $0.contender == name && !$0.baton }
        }
        guard !batons.isEmpty, !anchors.isEmpty else { return "" }
        var rows = [["ratio (>1: Baton better), median (worst)"] + cases]
        for baton in batons {
            rows.append(
                ["\(baton) vs best anchor"]
                    + cases.map { name in
                        let best = anchors.compactMap { report.result(case: name, contender: $0) }
                            .min { higherIsBetter ? $0.median > $1.median : $0.median < $1.median }
                        return cell(baton: report.result(case: name, contender: baton), anchor: best, higherIsBetter)
                    })
            for anchor in anchors {
                rows.append(
                    ["\(baton) vs \(anchor)"]
                        + cases.map { name in
                            cell(
                                baton: report.result(case: name, contender: baton),
                                anchor: report.result(case: name, contender: anchor), higherIsBetter)
                        })
            }
        }
        // A pair measured in none of these cases (an anchor of another unit) says nothing.
        return align(rows.filter { row in row.dropFirst().contains { $0 != "–" } })
    }

    private func cell(baton: BenchResult?, anchor: BenchResult?, _ higherIsBetter: Bool) -> String {
        guard let baton, let anchor else { return "–" }
        let median = ratio(baton.median, anchor.median, higherIsBetter)
        let worst = ratio(baton.worst, anchor.worst, higherIsBetter)
        return "\(median) (\(worst))"
    }

    private func ratio(_ baton: Double, _ anchor: Double, _ higherIsBetter: Bool) -> String {
        let value = higherIsBetter ? baton / anchor : anchor / baton
        guard value.isFinite else { return "–" }
        return formatted(value, digits: value >= 100 ? 0 : value >= 10 ? 1 : 2) + "×"
    }

    private func format(_ value: Double, _ unit: String) -> String {
        if unit == Unit.hitRatio { return formatted(value, digits: 3) }
        if unit == Unit.ofConfiguredRate { return formatted(value, digits: 4) }
        return formatted(value, digits: value >= 1000 ? 0 : value >= 100 ? 1 : 2)
    }

    private func align(_ rows: [[String]]) -> String {
        let columns = rows.map(\.count).max() ?? 0
        let widths = (0..<columns).map { column in
            rows.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0
        }
        return rows.map { row in
            row.enumerated().map { column, text in
                column == 0
                    ? text.padding(to: widths[column])
                    : String(repeating: " ", count: widths[column] - text.count) + text
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }
}

/// `value` with a fixed number of decimals (C locale, so the same on every machine).
func formatted(_ value: Double, digits: Int) -> String {
    String(format: "%.\(digits)f", value)
}

extension String {
    func padding(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
