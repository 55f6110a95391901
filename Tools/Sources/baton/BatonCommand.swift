import ArgumentParser

@main
struct BatonCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "baton",
        abstract: "Baton's command line: measure Baton against Foundation, GCD and pthreads, and stress-test it.",
        subcommands: [BenchCommand.self, FetchCommand.self, StressCommand.self]
    )
}
