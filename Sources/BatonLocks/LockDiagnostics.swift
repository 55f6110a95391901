import Atomics
import CBatonPlatform

/// Run-time checks on every ``Lock``, ``RecursiveLock``, ``ReadWriteLock`` and ``AsyncLock``
/// (and so every ``Protected`` and ``AsyncProtected``): lock-order inversions, re-entry, long
/// holds, and contention statistics.
///
/// For an ``AsyncLock`` the locks held are tracked per task rather than per thread, so orders
/// are checked between `AsyncLock`s (not between an `AsyncLock` and a sync lock), and a re-entry
/// is thrown as ``AsyncLockError`` rather than reported.
///
/// - **Lock order.** When ``checksLockOrder`` is on, every acquisition made while the thread
///   holds other locks records the order "held, then acquired" in one graph for the process.
///   The first acquisition that closes a cycle — the AB/BA pattern behind most deadlocks — is
///   reported before the thread blocks, naming the locks, both orders and where each lock was
///   taken. The threads need not collide for the report to come. The same check reports a lock
///   taken again by the thread that holds it (``LockReentry``).
/// - **Hold time.** With a ``holdTimeThreshold``, a critical section that held its lock longer
///   is reported after it releases the lock (``LongLockHold``).
/// - **Contention.** With ``collectsStatistics``, every lock created with a `name` counts its
///   acquisitions, the contended ones and the time spent waiting; ``statistics()`` reads them.
///
/// Defaults: the lock-order check is on in debug builds of Baton and off in release builds;
/// hold times and statistics are off. Each can be switched at any time. While everything is off,
/// a lock operation pays one relaxed load and one untaken branch for all of this. While
/// something is on, locks taken or released before the switch are not seen, which can only hide
/// an order, never report a false one.
///
/// ```swift
/// LockDiagnostics.checksLockOrder = true                  // also in a release build
/// LockDiagnostics.holdTimeThreshold = .milliseconds(5)
/// LockDiagnostics.setReportHandler { diagnostic in logger.error("\(diagnostic)") }
///
/// let accounts = Lock(name: "accounts")                   // named locks read better in reports
/// ```
///
/// Reports go to a handler you can replace; the default one prints to standard error and, in
/// debug builds, stops the program on an inversion or a re-entry. With Baton's `Logging` trait,
/// `LockDiagnostics.setReportLogger(_:)` sends them to a swift-log `Logger` instead, each with
/// its locks and sites as structured metadata.
///
/// Thread safety: every member may be used from any thread.
public enum LockDiagnostics {
    static let orderBit: UInt32 = 1
    static let holdTimeBit: UInt32 = 2
    static let statisticsBit: UInt32 = 4

    /// Whether lock acquisitions are checked for order inversions and re-entry.
    ///
    /// On by default in debug builds, off in release builds.
    public static var checksLockOrder: Bool {
        get { flags() & orderBit != 0 }
        set { setFlag(orderBit, newValue) }
    }

    /// Critical sections that hold a lock longer than this are reported; `nil` (the default)
    /// turns the check off.
    ///
    /// Only acquisitions made while the threshold is set are timed.
    public static var holdTimeThreshold: Duration? {
        get { settings.withLock { $0.holdTimeThreshold } }
        set {
            precondition(
                newValue.map { $0 > .zero } ?? true, "LockDiagnostics: the hold-time threshold must be positive")
            settings.withLock { $0.holdTimeThreshold = newValue }
            setFlag(holdTimeBit, newValue != nil)
        }
    }

    /// Whether named locks count their acquisitions, contended acquisitions and waiting time.
    ///
    /// Off by default. Locks created without a name are not counted.
    public static var collectsStatistics: Bool {
        get { flags() & statisticsBit != 0 }
        set { setFlag(statisticsBit, newValue) }
    }

    /// Replaces the function that receives every report.
    ///
    /// The handler runs on the thread that found the problem. For an inversion or a re-entry
    /// that thread is about to take a lock and may hold others: the handler must not take Baton
    /// locks that the reporting code might hold, and should return quickly. After a re-entry
    /// that deadlocks for certain, the program stops once the handler returns.
    public static func setReportHandler(_ handler: @escaping @Sendable (LockReport) -> Void) {
        settings.withLock { $0.handler = handler }
    }

    /// Restores ``defaultReportHandler(_:)``.
    public static func restoreDefaultReportHandler() {
        settings.withLock { $0.handler = defaultReportHandler }
    }

    /// Prints the report to standard error; in debug builds, an inversion or a re-entry then
    /// stops the program (a long hold does not).
    @Sendable
    public static func defaultReportHandler(_ diagnostic: LockReport) {
        writeToStandardError(diagnostic.description + "\n")
        #if DEBUG
        switch diagnostic {
        case .lockOrderInversion, .reentry:
            fatalError("stopped by Baton's lock diagnostics (see the report above)")
        case .longHold:
            break
        }
        #endif
    }

    /// The contention statistics of every lock name seen, sorted by name.
    ///
    /// Names of locks created while statistics were off are listed too, with the counts they
    /// have gathered while statistics were on.
    public static func statistics() -> [LockStatistics] {
        LockCounters.registry.withLock { registry in
            registry.byName.map { name, counters in counters.snapshot(name: name) }
        }.sorted { $0.name < $1.name }
    }

    /// Sets every statistics count back to zero.
    public static func resetStatistics() {
        LockCounters.registry.withLock { registry in
            for counters in registry.byName.values { counters.reset() }
        }
    }

    /// Delivers a report to the handler. Called with no diagnostics-internal lock held.
    static func report(_ diagnostic: LockReport) {
        let handler = settings.withLock { $0.handler }
        handler(diagnostic)
    }

    /// The current flags, installing the build's defaults on first use.
    @usableFromInline
    static func flags() -> UInt32 {
        let word = baton_lock_diagnostics()
        guard word == BATON_LOCK_DIAGNOSTICS_UNSET else { return word }
        #if DEBUG
        let defaults = orderBit
        #else
        let defaults: UInt32 = 0
        #endif
        _ = baton_lock_diagnostics_compare_exchange(BATON_LOCK_DIAGNOSTICS_UNSET, defaults)
        return baton_lock_diagnostics()
    }

    private static func setFlag(_ bit: UInt32, _ on: Bool) {
        settings.withLock { _ in
            let old = flags()
            let new = on ? old | bit : old & ~bit
            guard new != old else { return }
            _ = baton_lock_diagnostics_exchange(new)
            // Threads drop what they remember of held locks: some of those were taken or
            // released unseen.
            ThreadLockState.switchEpoch.wrappingIncrement(ordering: .relaxed)
        }
    }

    struct Settings {
        var handler: @Sendable (LockReport) -> Void = LockDiagnostics.defaultReportHandler
        var holdTimeThreshold: Duration?
    }

    static let settings = InternalMutex(Settings())
}
