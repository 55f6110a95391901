/// A problem the lock diagnostics found, as passed to the report handler (see
/// ``LockDiagnostics/setReportHandler(_:)``).
public enum LockReport: Sendable, Hashable, CustomStringConvertible {
    /// Locks taken in orders that form a cycle: a deadlock waiting to happen.
    case lockOrderInversion(LockOrderInversion)
    /// A lock taken again by the thread that holds it.
    case reentry(LockReentry)
    /// A critical section longer than the hold-time threshold.
    case longHold(LongLockHold)

    /// The report, ready to print.
    public var description: String {
        switch self {
        case .lockOrderInversion(let inversion): inversion.description
        case .reentry(let reentry): reentry.description
        case .longHold(let hold): hold.description
        }
    }
}
