import CBatonPlatform

/// A reader-writer lock: any number of readers at once, or one writer alone.
///
/// Use it for state that is read far more often than it is written: readers run in parallel,
/// so a read-mostly workload scales with cores where a mutex serialises it. For state that is
/// mostly written, or critical sections of a few nanoseconds, ``Lock`` is as fast or faster.
///
/// ```swift
/// let lock = ReadWriteLock()
/// nonisolated(unsafe) var table: [String: Int] = [:]   // guarded by `lock`
///
/// let hits = lock.withReadLock { table["hits"] ?? 0 }     // shared with other readers
/// lock.withWriteLock { table["hits", default: 0] += 1 }    // exclusive
/// ```
///
/// The lock is **writer-preferring on every platform**: once a writer waits, new readers wait
/// behind it, so a steady stream of overlapping readers can never starve a writer (glibc's
/// default `pthread_rwlock_t` lets them). On Linux it is a futex-based lock of Baton's own; on
/// Darwin a heap-allocated `pthread_rwlock_t`, whose policy is already writer-preferring. It is
/// a class, so it is never copied by accident.
///
/// ``Protected`` wraps a value in a `ReadWriteLock` so that the value can only be reached while
/// the lock is held: prefer it to a bare lock next to a variable.
///
/// Thread safety: every method may be called from any thread.
///
/// ``LockDiagnostics`` checks its acquisitions for order inversions and re-entry (by default in
/// debug builds); give the lock a `name` to make reports and statistics easier to read.
///
/// - Warning: Neither lock is re-entrant. Taking the write lock while holding the read lock
///   (an "upgrade") deadlocks, and so does taking the read lock again inside a read section
///   while a writer waits: the writer waits for the outer reader, the inner read waits for the
///   writer.
public final class ReadWriteLock {
    @usableFromInline let rwlock: PlatformRWLock
    @usableFromInline let identity: LockIdentity

    /// Creates an unlocked lock.
    ///
    /// - Parameters:
    ///   - name: A name for ``LockDiagnostics`` reports and statistics; locks that share a name
    ///     share their statistics.
    ///   - file: The creation site's file, for diagnostics reports; leave the default.
    ///   - line: The creation site's line, for diagnostics reports; leave the default.
    public init(name: String? = nil, file: StaticString = #fileID, line: UInt = #line) {
        rwlock = PlatformRWLock()
        identity = LockIdentity(.readWriteLock, name: name, file: file, line: line)
    }

    /// The name given at creation, if any.
    public var name: String? { identity.name }

    deinit {
        LockTracking.forget(self)
        rwlock.deallocate()
    }

    /// Runs `body` while holding the lock shared with other readers, and returns its result.
    ///
    /// Waits while a writer holds the lock or waits for it.
    ///
    /// - Parameters:
    ///   - file: The call site's file, for diagnostics reports; leave the default.
    ///   - line: The call site's line, for diagnostics reports; leave the default.
    ///   - body: The critical section.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws; the lock is released either way.
    /// - Warning: Do not write shared state inside `body`, and do not take this lock again.
    @inlinable
    public func withReadLock<Result, Failure: Error>(
        file: StaticString = #fileID, line: UInt = #line,
        _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        rwlock.lockRead(for: self, identity, file: file, line: line)
        defer { rwlock.unlockRead(for: self) }
        return try body()
    }

    /// The handle of the lock's state, for a structure of this package that keeps it beside
    /// its own hot fields and passes it back to ``withReadLock(through:of:file:line:_:)``.
    @inlinable package var platformLock: PlatformRWLock { rwlock }

    /// ``withReadLock(file:line:_:)`` on `lock`, through its ``platformLock`` kept by the
    /// caller: the state's address comes from the caller's own fields, and `lock` itself is
    /// loaded only while diagnostics are on, so the compare-and-swap waits for one dependent
    /// cache line fewer. While diagnostics are on, this is `lock.withReadLock` itself, the
    /// same acquisition and release in every report and statistic.
    ///
    /// - Precondition: `platform` is `lock`'s ``platformLock``.
    @inlinable
    package static func withReadLock<Result>(
        through platform: PlatformRWLock, of lock: @autoclosure () -> ReadWriteLock,
        file: StaticString = #fileID, line: UInt = #line, _ body: () -> Result
    ) -> Result {
        if _slowPath(baton_lock_diagnostics() != 0) {
            return lock().withReadLock(file: file, line: line, body)
        }
        platform.lockRead()
        defer { platform.unlockRead() }
        return body()
    }

    /// Runs `body` while holding the lock exclusively, and returns its result.
    ///
    /// Waits until no reader or writer holds the lock; readers that arrive meanwhile wait
    /// behind this writer.
    ///
    /// - Parameters:
    ///   - file: The call site's file, for diagnostics reports; leave the default.
    ///   - line: The call site's line, for diagnostics reports; leave the default.
    ///   - body: The critical section.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws; the lock is released either way.
    /// - Warning: Do not take this lock again inside `body`.
    @inlinable
    public func withWriteLock<Result, Failure: Error>(
        file: StaticString = #fileID, line: UInt = #line,
        _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        rwlock.lockWrite(for: self, identity, file: file, line: line)
        defer { rwlock.unlockWrite(for: self) }
        return try body()
    }

    /// Runs `body` under the read lock if it can be taken at once; returns `nil` without running
    /// `body` if a writer holds the lock or waits for it.
    ///
    /// - Parameters:
    ///   - file: The call site's file, for diagnostics reports; leave the default.
    ///   - line: The call site's line, for diagnostics reports; leave the default.
    ///   - body: The critical section.
    /// - Returns: What `body` returns, or `nil` if the read lock was not available.
    /// - Throws: What `body` throws.
    @inlinable
    public func tryWithReadLock<Result, Failure: Error>(
        file: StaticString = #fileID, line: UInt = #line,
        _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result? {
        guard rwlock.tryLockRead(for: self, identity, file: file, line: line) else { return nil }
        defer { rwlock.unlockRead(for: self) }
        return try body()
    }

    /// Runs `body` under the write lock if it can be taken at once; returns `nil` without running
    /// `body` if any reader or writer holds the lock.
    ///
    /// - Parameters:
    ///   - file: The call site's file, for diagnostics reports; leave the default.
    ///   - line: The call site's line, for diagnostics reports; leave the default.
    ///   - body: The critical section.
    /// - Returns: What `body` returns, or `nil` if the write lock was not available.
    /// - Throws: What `body` throws.
    @inlinable
    public func tryWithWriteLock<Result, Failure: Error>(
        file: StaticString = #fileID, line: UInt = #line,
        _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result? {
        guard rwlock.tryLockWrite(for: self, identity, file: file, line: line) else { return nil }
        defer { rwlock.unlockWrite(for: self) }
        return try body()
    }
}

// The platform lock does its own synchronisation; the stored property never changes after init.
extension ReadWriteLock: @unchecked Sendable {}
