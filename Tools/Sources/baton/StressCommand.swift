import ArgumentParser
import BatonStress
import BatonTesting
import Foundation

struct StressCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stress",
        abstract: "Race threads on every Baton structure and check the results: invariants and linearizability.",
        discussion: """
            Each structure runs for an equal share of --seconds with --threads threads, checking its \
            invariants as it goes and recorded rounds of operations with a linearizability checker. \
            Exits with status 1 if any violation was found. Structures: \
            \(StressTarget.all.map { "\($0.name) (\($0.summary))" }.joined(separator: "; ")).
            """
    )

    @Argument(help: "Structures to run (default: all).")
    var structures: [String] = []

    @Option(help: "Total time in seconds, shared among the structures run.")
    var seconds: Double = 10

    @Option(help: "Threads racing on each structure (default: 4 × the core count).")
    var threads: Int?

    func validate() throws {
        guard seconds > 0, seconds.isFinite else { throw ValidationError("--seconds must be positive") }
        if let threads, threads < 2 { throw ValidationError("--threads must be at least 2") }
        do {
            _ = try StressTarget.named(structures)
        } catch {
            throw ValidationError(error.description)
        }
    }

    func run() throws {
        let targets = try StressTarget.named(structures)
        let runner = StressRunner(
            totalDuration: .seconds(seconds),
            threads: threads ?? 4 * ProcessInfo.processInfo.activeProcessorCount)
        let results = runner.run(targets) { line in
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
        let report = StressReport(results)
        print(report.render())
        if !report.passed { throw ExitCode.failure }
    }
}
