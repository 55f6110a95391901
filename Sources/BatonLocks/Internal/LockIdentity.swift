/// What every Baton lock keeps for the diagnostics: its kind, name, creation site and, for a
/// named lock, its statistics counters. Stored inline in the lock; nothing is allocated for an
/// unnamed one.
@usableFromInline
struct LockIdentity: Sendable {
    let kind: LockDescription.Kind
    @usableFromInline let name: String?
    let file: StaticString
    let line: UInt
    let counters: LockCounters?

    @usableFromInline
    init(_ kind: LockDescription.Kind, name: String?, file: StaticString, line: UInt) {
        self.kind = kind
        self.name = name
        self.file = file
        self.line = line
        counters = name.map(LockCounters.forLock(named:))
    }

    var description: LockDescription {
        LockDescription(kind: kind, name: name, createdAt: SourceSite(file, line))
    }
}

/// How a lock is held.
@usableFromInline
enum LockHoldMode: Sendable {
    /// A `Lock`, a `RecursiveLock` or a write lock.
    case exclusive
    /// A read lock.
    case shared
}
