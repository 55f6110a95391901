import BatonLocks
import Foundation

/// Collects lock diagnostics instead of printing them and stopping the program.
///
/// The report handler is one for the whole process and tests run in parallel, so each test
/// names its locks with a fresh prefix and reads only the reports about those. Reports about
/// other locks go on to the default handler, so that a real inversion elsewhere in the test
/// process still stops it.
enum DiagnosticsCapture {
    private static let reports = Locked<[LockReport]>([])
    private static let prefixes = Locked<Set<String>>([])

    /// Installs the collecting handler (idempotent) and returns a unique prefix for lock names.
    static func start(_ label: String) -> String {
        let prefix = "\(label)-\(UUID().uuidString.prefix(8))"
        prefixes.withValue { _ = $0.insert(prefix) }
        LockDiagnostics.setReportHandler { diagnostic in
            let known = prefixes.get()
            let aboutATest = diagnostic.locks.contains { lock in
                known.contains { lock.name?.hasPrefix($0) ?? false }
            }
            if aboutATest {
                reports.withValue { $0.append(diagnostic) }
            } else {
                LockDiagnostics.defaultReportHandler(diagnostic)
            }
        }
        return prefix
    }

    /// The reports that mention a lock whose name starts with `prefix`.
    static func reports(about prefix: String) -> [LockReport] {
        reports.get().filter { diagnostic in
            diagnostic.locks.contains { $0.name?.hasPrefix(prefix) ?? false }
        }
    }
}

extension LockReport {
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
