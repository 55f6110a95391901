/// How contended the locks of one name were, while ``LockDiagnostics/collectsStatistics`` was on.
///
/// Counts add up over every lock created with that name (the shards of a cache, say).
public struct LockStatistics: Sendable, Hashable, CustomStringConvertible {
    /// The name the locks were given.
    public let name: String
    /// How many locks were created with this name.
    public let locks: Int
    /// Acquisitions counted.
    public let acquisitions: Int
    /// Acquisitions that found the lock held and had to wait.
    public let contendedAcquisitions: Int
    /// The time those acquisitions spent waiting, added up.
    public let totalWait: Duration

    /// Creates statistics.
    public init(name: String, locks: Int, acquisitions: Int, contendedAcquisitions: Int, totalWait: Duration) {
        self.name = name
        self.locks = locks
        self.acquisitions = acquisitions
        self.contendedAcquisitions = contendedAcquisitions
        self.totalWait = totalWait
    }

    /// The share of acquisitions that had to wait, from 0 to 1 (0 when there were none).
    public var contentionRatio: Double {
        acquisitions == 0 ? 0 : Double(contendedAcquisitions) / Double(acquisitions)
    }

    /// `"cache": 1200 acquisitions, 3.0% contended, 0.41 ms waiting`.
    public var description: String {
        let percent = (contentionRatio * 1000).rounded() / 10
        return "\"\(name)\": \(acquisitions) acquisitions, \(percent)% contended, \(totalWait) waiting"
    }
}
