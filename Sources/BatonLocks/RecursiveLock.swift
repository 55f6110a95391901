import Atomics
import CBatonPlatform

/// A mutual-exclusion lock that the thread holding it may acquire again.
///
/// Use it when a method that holds the lock calls another method that takes the same lock. The
/// lock is released when every acquisition has been balanced by a release.
///
/// ```swift
/// final class Registry: Sendable {
///     private let lock = RecursiveLock()
///     nonisolated(unsafe) private var names: [String] = []   // guarded by `lock`
///
///     func add(_ name: String) { lock.withLock { names.append(name) } }
///     func addAll(_ more: [String]) { lock.withLock { more.forEach(add) } }   // re-enters
/// }
/// ```
///
/// Thread safety: every method may be called from any thread. Unlocking from a thread that does
/// not hold the lock traps with a message, in every build.
///
/// - Warning: Re-entry hides lock-order problems: prefer ``Lock`` and a private
///   `…AssumingLockHeld` helper where you can.
public final class RecursiveLock {
    @usableFromInline let mutex: PlatformMutex
    @usableFromInline let identity: LockIdentity
    /// The holder's thread, 0 when free. Only the holder writes it, so a thread that reads its
    /// own ID here holds the lock.
    @usableFromInline let owner: UnsafeAtomic<UInt>
    /// Guarded by `mutex`; only the holder reads or writes it.
    @exclusivity(unchecked) @usableFromInline var depth = 0

    /// Creates an unlocked lock.
    ///
    /// - Parameters:
    ///   - name: A name for ``LockDiagnostics`` reports and statistics; locks that share a name
    ///     share their statistics.
    ///   - file: The creation site's file, for diagnostics reports; leave the default.
    ///   - line: The creation site's line, for diagnostics reports; leave the default.
    public init(name: String? = nil, file: StaticString = #fileID, line: UInt = #line) {
        mutex = PlatformMutex()
        identity = LockIdentity(.recursiveLock, name: name, file: file, line: line)
        owner = .create(0)
    }

    /// The name given at creation, if any.
    public var name: String? { identity.name }

    deinit {
        LockTracking.forget(self)
        mutex.deallocate()
        owner.destroy()
    }

    /// Acquires the lock, or enters it once more if the calling thread holds it already.
    ///
    /// - Parameters:
    ///   - file: The call site's file, for diagnostics reports; leave the default.
    ///   - line: The call site's line, for diagnostics reports; leave the default.
    @inlinable
    public func lock(file: StaticString = #fileID, line: UInt = #line) {
        let me = currentThreadID()
        if owner.load(ordering: .relaxed) == me {
            depth += 1
            return
        }
        mutex.lock(for: self, identity, file: file, line: line)
        owner.store(me, ordering: .relaxed)
        depth = 1
    }

    /// Acquires the lock if it is free or already held by the calling thread, without waiting.
    ///
    /// - Parameters:
    ///   - file: The call site's file, for diagnostics reports; leave the default.
    ///   - line: The call site's line, for diagnostics reports; leave the default.
    /// - Returns: `true` if the caller now holds the lock and must call ``unlock()``.
    @inlinable
    public func tryLock(file: StaticString = #fileID, line: UInt = #line) -> Bool {
        let me = currentThreadID()
        if owner.load(ordering: .relaxed) == me {
            depth += 1
            return true
        }
        guard mutex.tryLock(for: self, identity, file: file, line: line) else { return false }
        owner.store(me, ordering: .relaxed)
        depth = 1
        return true
    }

    /// Releases one acquisition; the lock is free once every acquisition has been released.
    ///
    /// - Warning: Traps if the calling thread does not hold the lock.
    @inlinable
    public func unlock() {
        // fatalError rather than precondition: the message is printed in release builds too.
        if owner.load(ordering: .relaxed) != currentThreadID() {
            fatalError("RecursiveLock: unlock() called from a thread that does not hold the lock.")
        }
        depth -= 1
        if depth == 0 {
            owner.store(0, ordering: .relaxed)
            mutex.unlock(for: self)
        }
    }

    /// Runs `body` while holding the lock, and returns its result. `body` may take this lock
    /// again.
    ///
    /// - Parameters:
    ///   - file: The call site's file, for diagnostics reports; leave the default.
    ///   - line: The call site's line, for diagnostics reports; leave the default.
    ///   - body: The critical section; it may take this lock again.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws; the lock is released either way.
    @inlinable
    public func withLock<Result, Failure: Error>(
        file: StaticString = #fileID, line: UInt = #line,
        _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        // Nested in a section of this thread's: that section releases the lock, so there is no
        // depth to count. This keeps re-entry at one thread-pointer read and one load.
        let me = currentThreadID()
        if owner.load(ordering: .relaxed) == me { return try body() }
        mutex.lock(for: self, identity, file: file, line: line)
        owner.store(me, ordering: .relaxed)
        depth = 1
        defer {
            depth = 0
            owner.store(0, ordering: .relaxed)
            mutex.unlock(for: self)
        }
        return try body()
    }

    /// Runs `body` while holding the lock if the lock is free or held by the calling thread;
    /// returns `nil` at once, without running `body`, if another thread holds it.
    ///
    /// - Parameters:
    ///   - file: The call site's file, for diagnostics reports; leave the default.
    ///   - line: The call site's line, for diagnostics reports; leave the default.
    ///   - body: The critical section; it may take this lock again.
    /// - Returns: What `body` returns, or `nil` if another thread held the lock.
    /// - Throws: What `body` throws.
    @inlinable
    public func tryWithLock<Result, Failure: Error>(
        file: StaticString = #fileID, line: UInt = #line,
        _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result? {
        guard tryLock(file: file, line: line) else { return nil }
        defer { unlock() }
        return try body()
    }
}

// The platform mutex serialises every access to `depth`; `owner` is atomic.
extension RecursiveLock: @unchecked Sendable {}
