import ArgumentParser
import BatonBench
import Foundation

struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure Baton beside the Foundation, GCD and pthread alternatives, in one run.",
        discussion: """
            Every scenario prints the median and the worst of its repetitions for each contender, \
            and Baton's ratio to each anchor. Scenarios: \
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

    func validate() throws {
        if let reps, reps < 1 { throw ValidationError("--reps must be at least 1") }
        do {
            _ = try BenchRunner.scenarios(named: scenarios)
        } catch let error as BenchRunner.UnknownScenario {
            throw ValidationError(error.description)
        }
    }

    func run() throws {
        let runner = BenchRunner(options: BenchOptions(quick: quick, reps: reps))
        let reports = try runner.run(try BenchRunner.scenarios(named: scenarios)) { table in
            print(table)
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
}
