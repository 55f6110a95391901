import Foundation

/// What `baton bench` does: run scenarios, print their tables, write JSON and charts.
public struct BenchRunner {
    /// A scenario name that `baton bench` does not know.
    public struct UnknownScenario: Error, CustomStringConvertible {
        public let name: String
        public var description: String {
            "unknown scenario '\(name)'; pass one of: \(allScenarios.map(\.name).joined(separator: ", "))"
        }
    }

    public var options: BenchOptions
    public var progress: BenchProgress

    public init(options: BenchOptions, progress: BenchProgress = .standardError) {
        self.options = options
        self.progress = progress
    }

    /// The scenarios named, in the order given; every known scenario when `names` is empty.
    public static func scenarios(named names: [String]) throws -> [any Scenario] {
        if names.isEmpty { return allScenarios }
        return try names.map { name in
            guard let scenario = allScenarios.first(where: { $0.name == name }) else {
                throw UnknownScenario(name: name)
            }
            return scenario
        }
    }

    /// Runs the scenarios one after another and returns their reports. `output` receives each
    /// scenario's table as soon as it is done.
    public func run(_ scenarios: [any Scenario], output: (String) -> Void) throws -> [ScenarioReport] {
        var reports: [ScenarioReport] = []
        for scenario in scenarios {
            progress("\(scenario.name): \(scenario.summary)")
            let report = try scenario.run(options, progress: progress)
            progress.finish()
            output(ReportTable(report).render())
            reports.append(report)
        }
        return reports
    }

    /// Writes the reports as JSON Lines: one object per scenario run (a single run is one
    /// ordinary JSON object).
    public static func writeJSON(_ reports: [ScenarioReport], to path: String) throws {
        let text = try reports.map { try $0.jsonLine() }.joined(separator: "\n") + "\n"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// Reads the reports that ``writeJSON(_:to:)`` wrote.
    public static func readJSON(from path: String) throws -> [ScenarioReport] {
        let decoder = JSONDecoder()
        return try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map { line in
            try decoder.decode(ScenarioReport.self, from: Data(line.utf8))
        }
    }

    /// Writes one SVG chart per report: at `path` for a single report, otherwise at `path` with
    /// the scenario's name before the extension (`chart.svg` → `chart-locks.svg`).
    /// - Returns: The paths written.
    @discardableResult
    public static func writeCharts(_ reports: [ScenarioReport], to path: String) throws -> [String] {
        try reports.map { report in
            let target = reports.count == 1 ? path : chartPath(path, scenario: report.scenario)
            try BarChart(report).render().write(toFile: target, atomically: true, encoding: .utf8)
            return target
        }
    }

    static func chartPath(_ path: String, scenario: String) -> String {
        let url = URL(fileURLWithPath: path)
        let base = url.deletingPathExtension().lastPathComponent
        let ext = url.pathExtension.isEmpty ? "svg" : url.pathExtension
        return url.deletingLastPathComponent().appendingPathComponent("\(base)-\(scenario).\(ext)").path
    }
}
