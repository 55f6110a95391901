/// A lock taken again by the thread that already holds it, where that deadlocks: a ``Lock``
/// taken twice, a ``ReadWriteLock`` taken for writing while read- or write-locked by the same
/// thread, or read-locked twice (which deadlocks as soon as a writer waits in between).
public struct LockReentry: Sendable, Hashable, CustomStringConvertible {
    /// The lock.
    public let lock: LockDescription
    /// Where the calling thread took it first, when the checker saw that acquisition.
    public let firstTakenAt: SourceSite?
    /// Where it is being taken again.
    public let takenAgainAt: SourceSite
    /// Whether either acquisition is exclusive (a write lock or a ``Lock``): the re-entry
    /// deadlocks at once, and the program stops after the report.
    public let deadlocks: Bool

    /// Creates a report.
    public init(lock: LockDescription, firstTakenAt: SourceSite?, takenAgainAt: SourceSite, deadlocks: Bool) {
        self.lock = lock
        self.firstTakenAt = firstTakenAt
        self.takenAgainAt = takenAgainAt
        self.deadlocks = deadlocks
    }

    /// A report naming the lock and both call sites.
    public var description: String {
        let first = firstTakenAt.map { " (taken at \($0))" } ?? ""
        let advice: String
        switch lock.kind {
        case .lock:
            advice = "Lock is not recursive: use RecursiveLock, or restructure so the lock is taken once."
        case .readWriteLock where deadlocks:
            advice = "ReadWriteLock is not re-entrant and cannot be upgraded from read to write."
        case .synchronizedLock:
            advice =
                "RecursiveReadWriteLock's exclusive holder may take it again, but a thread holding only the shared side may not."
        case .asyncLock:
            advice = "AsyncLock is not re-entrant: withLock throws AsyncLockError.Code.reentry."
        case .readWriteLock, .recursiveLock:
            advice =
                "A nested read lock waits behind any writer that arrived in between, which waits for the outer read."
        }
        return "\(lock): re-locked on the thread that already holds it\(first), again at "
            + "\(takenAgainAt); this \(deadlocks ? "would deadlock" : "can deadlock"). \(advice)"
    }
}
