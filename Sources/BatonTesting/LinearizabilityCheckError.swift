/// Why a linearizability check could not run: a mistake in how it was set up, found before any
/// round, or a model that rejects the object even when nothing runs concurrently.
///
/// Thread safety: a plain value; `Sendable`.
public enum LinearizabilityCheckError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The operation list is empty: there is nothing to run.
    case noOperations
    /// The budget allows no round: zero or negative rounds, or zero or negative time.
    case emptyBudget(CheckBudget)
    /// The round's shape is impossible: fewer than one thread, or fewer than one operation per
    /// thread.
    case invalidShape(threads: Int, operationsPerThread: Int)
    /// The operations, run one at a time on one thread, gave a history that the model does not
    /// accept: the model is wrong (for example it accepts nothing), or the object is wrong with
    /// no concurrency at all. The report shows the history and where the model stopped.
    case sequentialRunRejected(LinearizabilityReport)

    public var description: String {
        switch self {
        case .noOperations:
            "LinearizabilityCheck: the operation list is empty: give at least one operation to run"
        case .emptyBudget(let budget):
            "LinearizabilityCheck: the budget (\(budget)) allows no round: rounds and time must be positive"
        case .invalidShape(let threads, let operationsPerThread):
            "LinearizabilityCheck: a round needs at least one thread and one operation per thread "
                + "(got \(threads) threads, \(operationsPerThread) operations per thread)"
        case .sequentialRunRejected(let report):
            "LinearizabilityCheck: the model rejects the object's operations run one at a time on one thread, "
                + "so either the model is wrong (does it accept anything?) or the object is wrong even without "
                + "concurrency:\n\(report)"
        }
    }
}
