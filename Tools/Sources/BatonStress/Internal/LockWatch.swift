import BatonLocks
import Foundation

/// Baton's lock diagnostics, switched on around one stress run: the lock-order check (a lock
/// inversion or re-entry in any structure is a violation of the run), and contention statistics
/// for the named locks the structure uses.
enum LockWatch {
    /// What the diagnostics saw during a run.
    struct Findings {
        /// Inversions and re-entries, described.
        var problems: [String]
        /// Named locks that were taken during the run.
        var statistics: [LockStatistics]
    }

    /// Runs `body` with the lock-order check and statistics on, then restores the switches and
    /// the default report handler.
    static func watch<Result>(_ body: () -> Result) -> (Result, Findings) {
        let checked = LockDiagnostics.checksLockOrder
        let counted = LockDiagnostics.collectsStatistics
        let problems = ProblemLog()
        LockDiagnostics.setReportHandler { diagnostic in
            switch diagnostic {
            case .lockOrderInversion, .reentry: problems.append(diagnostic.description)
            case .longHold: break
            }
        }
        LockDiagnostics.checksLockOrder = true
        LockDiagnostics.collectsStatistics = true
        LockDiagnostics.resetStatistics()
        let result = body()
        let statistics = LockDiagnostics.statistics().filter { $0.acquisitions > 0 }
        LockDiagnostics.collectsStatistics = counted
        LockDiagnostics.checksLockOrder = checked
        LockDiagnostics.restoreDefaultReportHandler()
        return (result, Findings(problems: problems.all, statistics: statistics))
    }

    /// The reports, behind an `NSLock`: the handler may run while the reporting thread holds
    /// Baton locks, so it takes none of its own.
    private final class ProblemLog: @unchecked Sendable {  // `lock` guards `entries`
        private let lock = NSLock()
        private var entries: [String] = []

        func append(_ entry: String) {
            lock.withLock { entries.append(entry) }
        }

        var all: [String] { lock.withLock { entries } }
    }
}
