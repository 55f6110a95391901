/// A critical section that held a lock for longer than
/// ``LockDiagnostics/holdTimeThreshold``.
///
/// Long holds make every other thread that wants the lock wait; the usual causes are I/O,
/// logging or a callback run inside the critical section.
public struct LongLockHold: Sendable, Hashable, CustomStringConvertible {
    /// The lock.
    public let lock: LockDescription
    /// Where it was taken.
    public let takenAt: SourceSite
    /// How long it was held.
    public let duration: Duration
    /// The threshold in force.
    public let threshold: Duration

    /// Creates a report.
    public init(lock: LockDescription, takenAt: SourceSite, duration: Duration, threshold: Duration) {
        self.lock = lock
        self.takenAt = takenAt
        self.duration = duration
        self.threshold = threshold
    }

    /// A one-line report naming the lock, the site and both durations.
    public var description: String {
        "Baton lock held too long: \(lock) taken at \(takenAt) was held for \(duration), "
            + "over the threshold of \(threshold)."
    }
}
