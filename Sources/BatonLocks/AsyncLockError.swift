/// Why an ``AsyncLock`` (or ``AsyncProtected``) refused to run a critical section.
///
/// Match on ``code``; new codes may be added, so a `switch` over them needs a `default`:
///
/// ```swift
/// do {
///     try await lock.withLock { try await refresh() }
/// } catch let error as AsyncLockError where error.code == .reentry {
///     logger.fault("\(error)")
/// }
/// ```
public struct AsyncLockError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Value: String, Sendable, Hashable {
            case reentry
        }

        private let value: Value

        private init(_ value: Value) {
            self.value = value
        }

        /// The task already holds the lock: taking it again would wait for itself forever.
        public static let reentry = Code(.reentry)

        /// The code's name, e.g. `reentry`.
        public var description: String { value.rawValue }
    }

    /// What went wrong.
    public let code: Code
    /// The lock.
    public let lock: LockDescription
    /// Where the task took the lock first, for a re-entry.
    public let firstTakenAt: SourceSite?
    /// Where the task asked for the lock and was refused.
    public let takenAt: SourceSite

    init(code: Code, lock: LockDescription, firstTakenAt: SourceSite?, takenAt: SourceSite) {
        self.code = code
        self.lock = lock
        self.firstTakenAt = firstTakenAt
        self.takenAt = takenAt
    }

    /// A report naming the lock and both call sites.
    public var description: String {
        switch code {
        case .reentry:
            let first = firstTakenAt.map { " (taken at \($0))" } ?? ""
            return "\(lock): withLock called at \(takenAt) by the task that already holds it\(first); "
                + "waiting for itself would never end. AsyncLock is not re-entrant: take it once, and pass "
                + "what the section needs to the code it calls."
        default:
            return "\(lock): \(code) at \(takenAt)"
        }
    }
}
