/// Which ready job a ``JobQueue`` starts first: the five levels of
/// `Operation.QueuePriority`.
///
/// Among a queue's ready jobs, a higher priority starts first; jobs of one level start in the
/// order they became ready. A job's unfinished dependencies are raised to its priority, so a
/// high-priority job is not held up behind low-priority work it waits for.
///
/// Thread safety: a value type; `Sendable`.
public enum JobPriority: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
    case veryLow = 0
    case low = 1
    case normal = 2
    case high = 3
    case veryHigh = 4

    public static func < (lhs: JobPriority, rhs: JobPriority) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    public var description: String {
        switch self {
        case .veryLow: "veryLow"
        case .low: "low"
        case .normal: "normal"
        case .high: "high"
        case .veryHigh: "veryHigh"
        }
    }
}
