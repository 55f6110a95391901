/// What a lock diagnostic says about one lock: its kind, the name it was given, and where it was
/// created.
public struct LockDescription: Sendable, Hashable, CustomStringConvertible {
    /// The kinds of Baton lock.
    public enum Kind: String, Sendable, Hashable {
        /// A ``Lock``.
        case lock = "Lock"
        /// A ``RecursiveLock``.
        case recursiveLock = "RecursiveLock"
        /// A ``ReadWriteLock``, alone or inside a ``Protected``.
        case readWriteLock = "ReadWriteLock"
        /// A ``RecursiveReadWriteLock``, the lock of a `@Synchronized` class. (The case keeps
        /// the type's 1.0 name, `SynchronizedLock`, until the next major release.)
        case synchronizedLock = "RecursiveReadWriteLock"
        /// An ``AsyncLock``, alone or inside an ``AsyncProtected``.
        case asyncLock = "AsyncLock"
    }

    /// The lock's type.
    public let kind: Kind
    /// The name given when the lock was created, if any.
    public let name: String?
    /// Where the lock was created.
    public let createdAt: SourceSite

    /// Creates a description.
    public init(kind: Kind, name: String?, createdAt: SourceSite) {
        self.kind = kind
        self.name = name
        self.createdAt = createdAt
    }

    /// `Lock "accounts" (created at App/Bank.swift:12)`, or without the quoted name for an
    /// unnamed lock.
    public var description: String {
        let named = name.map { " \"\($0)\"" } ?? ""
        return "\(kind.rawValue)\(named) (created at \(createdAt))"
    }
}
