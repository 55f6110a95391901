import Dispatch

/// The thread priority a job's body runs at, mapped to Dispatch's quality-of-service classes.
///
/// A ``JobQueue`` has one (``JobQueue/qualityOfService``) and a ``Job`` may override it
/// (``Job/qualityOfService``). Unlike ``JobPriority``, which orders the ready jobs of one queue,
/// the quality of service is what the operating system sees: the worker that runs the job is
/// drawn from `DispatchQueue.global(qos:)` of this class, and an ``AsyncJob``'s task gets the
/// matching `TaskPriority`.
///
/// Thread safety: a value type; `Sendable`.
public enum JobQualityOfService: Int, Sendable, Comparable, CaseIterable {
    case background = 0
    case utility = 1
    case `default` = 2
    case userInitiated = 3
    case userInteractive = 4

    public static func < (lhs: JobQualityOfService, rhs: JobQualityOfService) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    /// The Dispatch class of the same name.
    public var dispatchQoS: DispatchQoS.QoSClass {
        switch self {
        case .background: .background
        case .utility: .utility
        case .default: .default
        case .userInitiated: .userInitiated
        case .userInteractive: .userInteractive
        }
    }

    /// The task priority an ``AsyncJob`` body runs at.
    public var taskPriority: TaskPriority {
        switch self {
        case .background: .background
        case .utility: .utility
        case .default: .medium
        case .userInitiated, .userInteractive: .high
        }
    }
}
