import BatonLocks
import BatonTesting

/// What one stress run did and found.
///
/// Thread safety: a plain value; `Sendable`.
public struct StressResult: Sendable, Hashable {
    /// The structure's name, as `baton stress` takes it.
    public var name: String
    /// How many threads raced.
    public var threads: Int
    /// Operations performed on the structure (recorded or not).
    public var operations: Int
    /// Histories checked: recorded rounds the linearizability checker accepted or rejected,
    /// futures whose completion was audited, job graphs whose runs were audited.
    public var historiesChecked: Int
    /// Recorded rounds the checker could not decide within its step budget (not violations).
    public var undecidedHistories: Int
    /// How many violations were found.
    public var violationCount: Int
    /// Descriptions of the first violations found.
    public var violations: [String]
    /// How long the run took.
    public var elapsed: Duration
    /// Contention of the named Baton locks taken during the run (see ``LockDiagnostics``).
    public var lockStatistics: [LockStatistics]

    /// Creates a result.
    public init(
        name: String, threads: Int, operations: Int, historiesChecked: Int, undecidedHistories: Int,
        violationCount: Int, violations: [String], elapsed: Duration, lockStatistics: [LockStatistics] = []
    ) {
        self.name = name
        self.threads = threads
        self.operations = operations
        self.historiesChecked = historiesChecked
        self.undecidedHistories = undecidedHistories
        self.violationCount = violationCount
        self.violations = violations
        self.elapsed = elapsed
        self.lockStatistics = lockStatistics
    }

    /// Whether the run found no violation.
    public var passed: Bool { violationCount == 0 }

    /// Operations per second of the run's wall time (checking included).
    public var operationsPerSecond: Double {
        let seconds = elapsed.seconds
        return seconds > 0 ? Double(operations) / seconds : 0
    }
}
