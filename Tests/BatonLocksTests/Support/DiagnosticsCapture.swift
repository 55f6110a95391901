import BatonLocks
import Foundation

/// Collects lock diagnostics instead of printing them and stopping the program.
///
/// The report handler is one for the whole process and tests run in parallel, so each test
/// names its locks with a fresh prefix and reads only the reports about those.
enum DiagnosticsCapture {
    private static let reports = Locked<[LockDiagnostic]>([])

    /// Installs the collecting handler (idempotent) and returns a unique prefix for lock names.
    static func start(_ label: String) -> String {
        LockDiagnostics.setReportHandler { diagnostic in reports.withValue { $0.append(diagnostic) } }
        return "\(label)-\(UUID().uuidString.prefix(8))"
    }

    /// The reports that mention a lock whose name starts with `prefix`.
    static func reports(about prefix: String) -> [LockDiagnostic] {
        reports.get().filter { diagnostic in
            diagnostic.locks.contains { $0.name?.hasPrefix(prefix) ?? false }
        }
    }
}

extension LockDiagnostic {
    /// Every lock the report names.
    var locks: [LockDescription] {
        switch self {
        case .lockOrderInversion(let inversion): inversion.locks
        case .reentry(let reentry): [reentry.lock]
        case .longHold(let hold): [hold.lock]
        }
    }

    var inversion: LockOrderInversion? {
        if case .lockOrderInversion(let inversion) = self { inversion } else { nil }
    }

    var reentry: LockReentry? {
        if case .reentry(let reentry) = self { reentry } else { nil }
    }

    var longHold: LongLockHold? {
        if case .longHold(let hold) = self { hold } else { nil }
    }
}
