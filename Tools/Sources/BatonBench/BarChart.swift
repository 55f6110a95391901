import Foundation

/// Draws a scenario report as an SVG grouped bar chart: one group per case, one bar per
/// contender, one panel per unit; a whisker on each bar reaches the worst repetition. Times use
/// a logarithmic axis when they span more than a factor of 20, so that a 100× slower anchor and
/// Baton both stay readable.
public struct BarChart {
    public let report: ScenarioReport

    public init(_ report: ScenarioReport) {
        self.report = report
    }

    private static let palette = [
        "#8c8c8c", "#b07aa1", "#9c755f", "#edc948", "#76b7b2", "#ff9da7",
        "#4e79a7", "#f28e2b", "#e15759", "#59a14f", "#bab0ac", "#17becf",
    ]
    private let panelHeight = 320.0
    private let plotLeft = 70.0
    private let plotTop = 40.0
    private let plotHeight = 220.0
    private let barWidth = 12.0
    private let groupGap = 24.0

    /// The chart as a standalone SVG document.
    public func render() -> String {
        let contenders = report.contenders
        let units = report.results.map(\.unit).uniqued()
        let maxCases =
            units.map { unit in report.results.filter { $0.unit == unit }.map(\.case).uniqued().count }.max() ?? 1
        let groupWidth = Double(contenders.count) * barWidth + groupGap
        let width = plotLeft + Double(maxCases) * groupWidth + 220
        let height = Double(units.count) * panelHeight + 20
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(width)) \(Int(height))" font-family="sans-serif" font-size="11">
            <rect width="100%" height="100%" fill="white"/>

            """
        for (index, unit) in units.enumerated() {
            svg += panel(unit: unit, top: Double(index) * panelHeight, contenders: contenders, groupWidth: groupWidth)
        }
        // Legend, on the right.
        let legendLeft = plotLeft + Double(maxCases) * groupWidth + 20
        for (index, contender) in contenders.enumerated() {
            let y = plotTop + Double(index) * 16
            let isBaton = report.results.first { $0.contender == contender }?.baton ?? false
            svg += "<rect x=\"\(legendLeft)\" y=\"\(y)\" width=\"10\" height=\"10\" fill=\"\(color(index))\"/>"
            svg +=
                "<text x=\"\(legendLeft + 14)\" y=\"\(y + 9)\"\(isBaton ? " font-weight=\"bold\"" : "")>\(escape(contender))\(isBaton ? " (Baton)" : "")</text>\n"
        }
        return svg + "</svg>\n"
    }

    private func panel(unit: String, top: Double, contenders: [String], groupWidth: Double) -> String {
        let rows = report.results.filter { $0.unit == unit }
        let cases = rows.map(\.case).uniqued()
        let values = rows.flatMap { [$0.median, $0.worst] }.filter { $0 > 0 }
        let higherIsBetter = BenchResult.higherIsBetter(unit)
        let low = values.min() ?? 1
        let high = values.max() ?? 1
        let logarithmic = !higherIsBetter && high / low > 20
        let axisLow = logarithmic ? pow(10, floor(log10(low))) : 0
        let axisHigh =
            logarithmic
            ? pow(10, floor(log10(high)) + 1) : (higherIsBetter && unit == Unit.hitRatio ? max(1, high) : high * 1.1)
        func y(_ value: Double) -> Double {
            let fraction: Double
            if logarithmic {
                fraction = (log10(max(value, axisLow)) - log10(axisLow)) / (log10(axisHigh) - log10(axisLow))
            } else {
                fraction = axisHigh > axisLow ? (value - axisLow) / (axisHigh - axisLow) : 0
            }
            return top + plotTop + plotHeight * (1 - fraction)
        }
        let plotWidth = Double(cases.count) * groupWidth
        var svg = "<text x=\"\(plotLeft)\" y=\"\(top + 20)\" font-size=\"14\" font-weight=\"bold\">"
        svg +=
            "\(escape(report.scenario)): \(escape(unit)), median (whisker: worst rep)\(logarithmic ? ", log scale" : "")"
        svg += "\(higherIsBetter ? " (higher is better)" : " (lower is better)") — \(report.cores) cores</text>\n"
        // Grid lines and their labels.
        var ticks: [Double] = []
        if logarithmic {
            var tick = axisLow
            while tick <= axisHigh * 1.0001 {
                ticks.append(tick)
                tick *= 10
            }
        } else {
            ticks = (0...4).map { axisLow + (axisHigh - axisLow) * Double($0) / 4 }
        }
        for tick in ticks {
            let ty = y(tick)
            svg += "<line x1=\"\(plotLeft)\" y1=\"\(ty)\" x2=\"\(plotLeft + plotWidth)\" y2=\"\(ty)\" stroke=\"#ddd\"/>"
            svg +=
                "<text x=\"\(plotLeft - 6)\" y=\"\(ty + 4)\" text-anchor=\"end\">\(escape(label(tick, unit)))</text>\n"
        }
        for (caseIndex, name) in cases.enumerated() {
            let groupLeft = plotLeft + Double(caseIndex) * groupWidth + groupGap / 2
            for (index, contender) in contenders.enumerated() {
                guard let result = report.result(case: name, contender: contender), result.unit == unit else {
                    continue
                }
                let x = groupLeft + Double(index) * barWidth
                let barTop = y(result.median)
                let barHeight = max(0.5, top + plotTop + plotHeight - barTop)
                svg +=
                    "<rect x=\"\(x)\" y=\"\(barTop)\" width=\"\(barWidth - 1)\" height=\"\(barHeight)\" fill=\"\(color(index))\">"
                svg += "<title>\(escape(contender)) — \(escape(name)): \(escape(label(result.median, unit))) "
                svg += "(worst \(escape(label(result.worst, unit))))</title></rect>\n"
                // A whisker from the median to the worst repetition shows collapses that a
                // median hides.
                let whiskerX = x + (barWidth - 1) / 2
                let worstY = y(result.worst)
                if abs(worstY - barTop) >= 1 {
                    svg +=
                        "<line x1=\"\(whiskerX)\" y1=\"\(barTop)\" x2=\"\(whiskerX)\" y2=\"\(worstY)\" stroke=\"#222\"/>"
                    svg +=
                        "<line x1=\"\(whiskerX - 3)\" y1=\"\(worstY)\" x2=\"\(whiskerX + 3)\" y2=\"\(worstY)\" stroke=\"#222\"/>\n"
                }
            }
            let labelX = groupLeft + Double(contenders.count) * barWidth / 2
            svg +=
                "<text x=\"\(labelX)\" y=\"\(top + plotTop + plotHeight + 16)\" text-anchor=\"middle\">\(escape(name))</text>\n"
        }
        svg +=
            "<line x1=\"\(plotLeft)\" y1=\"\(top + plotTop + plotHeight)\" x2=\"\(plotLeft + plotWidth)\" y2=\"\(top + plotTop + plotHeight)\" stroke=\"#333\"/>\n"
        return svg
    }

    private func color(_ index: Int) -> String { Self.palette[index % Self.palette.count] }

    private func label(_ value: Double, _ unit: String) -> String {
        if unit == Unit.hitRatio { return formatted(value, digits: 2) }
        if unit == Unit.ofConfiguredRate { return formatted(value, digits: 3) }
        return formatted(value, digits: value >= 10 || value == 0 ? 0 : value >= 1 ? 1 : 2)
    }

    private func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
