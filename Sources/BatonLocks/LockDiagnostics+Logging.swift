#if Logging
import BatonInternals
import Logging

extension LockDiagnostics {
    /// Sends every report of the lock diagnostics to `logger`, in place of the report handler.
    ///
    /// ```swift
    /// LockDiagnostics.setReportLogger(Logger(label: "locks"))
    /// ```
    ///
    /// Each report is one log entry: its message is the report's first line, its level
    /// ``LockReport/logLevel``, and its metadata name the locks and the sites
    /// (``LockReport/logMetadata``). The diagnostics report only what they find, which takes a
    /// diagnostic that is on: nothing is logged on the path of a lock taken in order.
    ///
    /// As for any handler (see ``setReportHandler(_:)``), the logger's handler runs on the thread
    /// that found the problem, which may hold locks: it must not take Baton locks that the
    /// reporting code might hold. After a re-entry that deadlocks for certain, the program stops
    /// once the entry is logged. ``restoreDefaultReportHandler()`` puts standard error back.
    ///
    /// Available with Baton's `Logging` trait, which adds apple/swift-log.
    public static func setReportLogger(_ logger: Logger) {
        setReportHandler { report in
            logger.log(level: report.logLevel, "\(report.summary)", metadata: report.logMetadata)
        }
    }
}

extension LockReport {
    /// The level a report is logged at: `.error` for an inversion and for a re-entry that
    /// deadlocks, `.warning` for a re-entry that may not and for a long hold.
    public var logLevel: Logger.Level {
        switch self {
        case .lockOrderInversion: .error
        case .reentry(let reentry): reentry.deadlocks ? .error : .warning
        case .longHold: .warning
        }
    }

    /// The report as structured metadata, for a log entry.
    ///
    /// | key | value |
    /// |---|---|
    /// | `baton.report` | `lock-order-inversion`, `reentry` or `long-hold` |
    /// | `baton.locks` | inversion: the locks on the cycle, each as ``LockDescription`` describes it |
    /// | `baton.order` | inversion: the order just seen, with its two sites |
    /// | `baton.earlier_orders` | inversion: the earlier orders that close the cycle |
    /// | `baton.lock` | re-entry, long hold: the lock |
    /// | `baton.taken_at` | re-entry: where it was taken again; long hold: where it was taken |
    /// | `baton.first_taken_at` | re-entry: where the holder took it first, when known |
    /// | `baton.deadlocks` | re-entry: `true` if it deadlocks for certain |
    /// | `baton.held_ms`, `baton.threshold_ms` | long hold: the hold and the threshold, in milliseconds |
    ///
    /// Sites are `FileID:line`.
    public var logMetadata: Logger.Metadata {
        switch self {
        case .lockOrderInversion(let inversion):
            [
                "baton.report": "lock-order-inversion",
                "baton.locks": .array(inversion.locks.map { .string($0.description) }),
                "baton.order": .string(inversion.newOrder.description),
                "baton.earlier_orders": .array(inversion.earlierOrders.map { .string($0.description) }),
            ]
        case .reentry(let reentry):
            [
                "baton.report": "reentry",
                "baton.lock": .string(reentry.lock.description),
                "baton.taken_at": .string(reentry.takenAgainAt.description),
                "baton.deadlocks": .stringConvertible(reentry.deadlocks),
            ].merging(reentry.firstTakenAt.map { ["baton.first_taken_at": .string($0.description)] } ?? [:]) {
                first, _ in first
            }
        case .longHold(let hold):
            [
                "baton.report": "long-hold",
                "baton.lock": .string(hold.lock.description),
                "baton.taken_at": .string(hold.takenAt.description),
                "baton.held_ms": .stringConvertible(Double(hold.duration.wholeNanoseconds) / 1e6),
                "baton.threshold_ms": .stringConvertible(Double(hold.threshold.wholeNanoseconds) / 1e6),
            ]
        }
    }

    /// The first line of the report: the whole of it, but for an inversion's list of locks and
    /// orders, which the metadata carry.
    var summary: Substring {
        description.prefix { $0 != "\n" }
    }
}

#endif
