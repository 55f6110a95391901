import Foundation

/// A comparative benchmark: Baton's contenders and the anchors a user would otherwise pick,
/// measured in the same run.
public protocol Scenario: Sendable {
    /// The name used on the command line, e.g. `"locks"`.
    var name: String { get }
    /// One line describing what is measured.
    var summary: String { get }
    /// Runs every case and contender and returns the measurements.
    func run(_ options: BenchOptions, progress: BenchProgress) throws -> ScenarioReport
}

/// How large and how often a scenario measures.
public struct BenchOptions: Sendable {
    /// Reduced sizes and repetitions, for a smoke run.
    public var quick: Bool
    /// Repetitions per (case, contender); the median and the worst are reported.
    public var reps: Int
    /// A factor on every operation count (1 for a full run); tests use a tiny one.
    public var scale: Double

    public init(quick: Bool = false, reps: Int? = nil, scale: Double? = nil) {
        precondition(reps.map { $0 > 0 } ?? true, "reps must be positive")
        precondition(scale.map { $0 > 0 } ?? true, "scale must be positive")
        self.quick = quick
        self.reps = reps ?? (quick ? 2 : 5)
        self.scale = scale ?? (quick ? 0.02 : 1)
    }

    /// `full` scaled by ``scale``, and never below `minimum`.
    public func count(_ full: Int, minimum: Int = 1) -> Int {
        max(minimum, Int((Double(full) * scale).rounded()))
    }
}

/// Where a scenario reports what it is doing while it runs.
public struct BenchProgress: Sendable {
    let report: @Sendable (String) -> Void
    let finish: @Sendable () -> Void

    /// - Parameters:
    ///   - report: Receives each progress line.
    ///   - finish: Called when a scenario is done, before its table is printed.
    public init(_ report: @escaping @Sendable (String) -> Void, finish: @escaping @Sendable () -> Void = {}) {
        self.report = report
        self.finish = finish
    }

    /// Progress on standard error, so standard output stays the table: one line rewritten in
    /// place on a terminal, a line per step otherwise (a log, CI).
    public static let standardError: BenchProgress = {
        guard isatty(STDERR_FILENO) == 1 else {
            return BenchProgress { line in FileHandle.standardError.write(Data((line + "\n").utf8)) }
        }
        // Carriage return and "erase line": the next step replaces this one.
        let erase = "\r\u{1B}[K"
        return BenchProgress(
            { line in FileHandle.standardError.write(Data((erase + line).utf8)) },
            finish: { FileHandle.standardError.write(Data(erase.utf8)) })
    }()

    /// Discards progress.
    public static let silent = BenchProgress { _ in }

    public func callAsFunction(_ line: String) { report(line) }
}

/// Every scenario `baton bench` knows, in the order it runs them.
public let allScenarios: [any Scenario] = [
    LocksScenario(),
    CacheScenario(),
    JobsScenario(),
    FuturesScenario(),
    ClassesScenario(),
    AsyncScenario(),
    HTTPScenario(),
]

/// The number of cores the run can use.
public var activeCores: Int { ProcessInfo.processInfo.activeProcessorCount }
