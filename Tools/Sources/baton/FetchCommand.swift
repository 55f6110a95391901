import ArgumentParser
import BatonBench
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct FetchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract: "Fetch URLs in parallel and print status, bytes and time for each.",
        discussion: """
            At most --max-concurrent requests are in flight; identical URLs are fetched once; \
            transient failures are retried. A progress bar is drawn on a terminal. The exit \
            status is 1 if any URL did not answer with a 2xx status.
            """
    )

    @Argument(help: "The URLs to fetch.")
    var urls: [String]

    @Option(help: "The most requests in flight at once.")
    var maxConcurrent = 6

    @Option(help: "Seconds each attempt may take.")
    var timeout: Double = 30

    @Option(help: "The most attempts per URL (1: no retry).")
    var attempts = 3

    func validate() throws {
        guard maxConcurrent >= 1 else { throw ValidationError("--max-concurrent must be at least 1") }
        guard attempts >= 1 else { throw ValidationError("--attempts must be at least 1") }
        guard timeout > 0 else { throw ValidationError("--timeout must be positive") }
        for text in urls {
            guard let url = URL(string: text), let scheme = url.scheme, ["http", "https"].contains(scheme) else {
                throw ValidationError("not an http(s) URL: \(text)")
            }
        }
    }

    func run() throws {
        let run = FetchRun(
            urls: urls.map { URL(string: $0)! }, maxConcurrent: maxConcurrent,
            requestTimeout: .milliseconds(Int64(timeout * 1000)), attempts: attempts)
        let terminal = isatty(STDERR_FILENO) != 0
        let start = ContinuousClock.now
        let lines = try run.run { done, total in
            let text =
                terminal
                ? "\r" + FetchRun.progressBar(done: done, total: total) + (done == total ? "\n" : "")
                : "fetched \(done)/\(total)\n"
            FileHandle.standardError.write(Data(text.utf8))
        }
        let elapsed = ContinuousClock.now - start
        for line in lines { print(FetchRun.describe(line)) }
        print(FetchRun.summary(lines, elapsed: elapsed))
        if !lines.allSatisfy(\.succeeded) { throw ExitCode(1) }
    }
}
