/// The time limits of a cache, in nanoseconds of its ``CacheClock``.
@usableFromInline
struct Expiry: Sendable {
    /// Entries expire this long after they were written, if set.
    @usableFromInline let timeToLive: Int64?
    /// Entries expire this long after they were last read (or written), if set.
    @usableFromInline let timeToIdle: Int64?

    @usableFromInline
    init(timeToLive: Int64?, timeToIdle: Int64?) {
        self.timeToLive = timeToLive
        self.timeToIdle = timeToIdle
    }

    /// Whether every entry can expire; when not, and no entry has a lifetime of its own, no
    /// operation reads the clock.
    @inlinable var isEnabled: Bool { timeToLive != nil || timeToIdle != nil }

    /// The deadline of an entry written at `now` with its own lifetime (nanoseconds), or the
    /// cache's, or none (`Int64.max`). Saturates rather than wraps.
    @inlinable
    func deadline(writtenAt now: Int64, lifetime: Int64?) -> Int64 {
        guard let lifetime = lifetime ?? timeToLive else { return .max }
        let (sum, overflow) = now.addingReportingOverflow(lifetime)
        return overflow ? .max : sum
    }
}
