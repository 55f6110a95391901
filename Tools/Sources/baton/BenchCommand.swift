import ArgumentParser
import BatonBench
import Foundation

struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure Baton beside the Foundation, GCD and pthread alternatives, in one run.",
        discussion: """
            Every scenario prints the median and the worst of its repetitions for each contender, \
            and Baton's ratio to each anchor. When several scenarios run, each runs in a fresh \
            process of its own, so that what one leaves behind on the heap does not slow the \
            next. Scenarios: \
            \(allScenarios.map { "\($0.name) (\($0.summary))" }.joined(separator: "; ")).
            """
    )

    @Argument(help: "Scenarios to run (default: all).")
    var scenarios: [String] = []

    @Flag(help: "Small sizes and 2 repetitions: a smoke run of a few seconds.")
    var quick = false

    @Option(help: "Repetitions per case and contender (default: 5, or 2 with --quick).")
    var reps: Int?

    @Option(help: "Write the results as JSON to this file (one object per scenario).")
    var json: String?

    @Option(help: "Draw an SVG bar chart to this file (one file per scenario when several run).")
    var chart: String?

    @Flag(help: "Run every scenario in this process, one after another, instead of one process each.")
    var inProcess = false

    /// Where a scenario's own process leaves its report for the process that started it.
    @Option(help: .hidden)
    var reportFile: String?

    func validate() throws {
        if let reps, reps < 1 { throw ValidationError("--reps must be at least 1") }
        do {
            _ = try BenchRunner.scenarios(named: scenarios)
        } catch let error as BenchRunner.UnknownScenario {
            throw ValidationError(error.description)
        }
    }

    func run() throws {
        let selected = try BenchRunner.scenarios(named: scenarios)
        let reports: [ScenarioReport]
        if selected.count > 1 && !inProcess {
            reports = try selected.map(runInOwnProcess)
        } else {
            let runner = BenchRunner(options: BenchOptions(quick: quick, reps: reps))
            reports = try runner.run(selected) { table in print(table) }
        }
        if let reportFile {
            try BenchRunner.writeJSON(reports, to: reportFile)
        }
        if let json {
            try BenchRunner.writeJSON(reports, to: json)
            FileHandle.standardError.write(Data("wrote \(json)\n".utf8))
        }
        if let chart {
            for path in try BenchRunner.writeCharts(reports, to: chart) {
                FileHandle.standardError.write(Data("wrote \(path)\n".utf8))
            }
        }
    }

    /// Runs `scenario` in a new `baton bench` process, which prints its table to the same
    /// standard output, and returns its report.
    ///
    /// The heap a scenario leaves behind (what its anchors leak, how freed memory lies in the
    /// allocator's bins) otherwise changes what allocation costs in the scenarios after it:
    /// making 100,000 small objects measured over 3× slower after the cache scenario than in a
    /// fresh process.
    private func runInOwnProcess(_ scenario: any Scenario) throws -> ScenarioReport {
        let reportPath = FileManager.default.temporaryDirectory
            .appendingPathComponent("baton-bench-\(scenario.name)-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: reportPath) }
        let child = Process()
        child.executableURL = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        child.arguments =
            ["bench", scenario.name, "--report-file", reportPath]
            + (quick ? ["--quick"] : []) + (reps.map { ["--reps", String($0)] } ?? [])
        try child.run()
        child.waitUntilExit()
        let failed = ScenarioProcessFailed(
            scenario: scenario.name, signalled: child.terminationReason == .uncaughtSignal,
            status: child.terminationStatus)
        guard !failed.signalled, failed.status == 0, FileManager.default.fileExists(atPath: reportPath),
            let report = try BenchRunner.readJSON(from: reportPath).first
        else { throw failed }
        return report
    }
}

/// A scenario's own process failed, or ended without a report.
struct ScenarioProcessFailed: Error, CustomStringConvertible {
    let scenario: String
    /// Whether a signal ended the process; `status` is then the signal's number.
    let signalled: Bool
    let status: Int32

    var description: String {
        let end = signalled ? "was ended by signal \(status)" : "exited with status \(status)"
        return "the \(scenario) scenario's process \(end) and left no report"
    }
}
