import Atomics

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
    /// The holder's thread, 0 when free. Only the holder writes it, so a thread that reads its
    /// own ID here holds the lock.
    @usableFromInline let owner: UnsafeAtomic<UInt>
    /// Guarded by `mutex`; only the holder reads or writes it.
    @exclusivity(unchecked) @usableFromInline var depth = 0

    /// Creates an unlocked lock.
    public init() {
        mutex = PlatformMutex()
        owner = .create(0)
    }

    deinit {
        mutex.deallocate()
        owner.destroy()
    }

    /// Acquires the lock, or enters it once more if the calling thread holds it already.
    @inlinable
    public func lock() {
        let me = currentThreadID()
        if owner.load(ordering: .relaxed) == me {
            depth += 1
            return
        }
        mutex.lock()
        owner.store(me, ordering: .relaxed)
        depth = 1
    }

    /// Acquires the lock if it is free or already held by the calling thread, without waiting.
    ///
    /// - Returns: `true` if the caller now holds the lock and must call ``unlock()``.
    @inlinable
    public func tryLock() -> Bool {
        let me = currentThreadID()
        if owner.load(ordering: .relaxed) == me {
            depth += 1
            return true
        }
        guard mutex.tryLock() else { return false }
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
            mutex.unlock()
        }
    }

    /// Runs `body` while holding the lock, and returns its result. `body` may take this lock
    /// again.
    ///
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws; the lock is released either way.
    @inlinable
    public func withLock<Result, Failure: Error>(
        _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        lock()
        defer { unlock() }
        return try body()
    }

    /// Runs `body` while holding the lock if the lock is free or held by the calling thread;
    /// returns `nil` at once, without running `body`, if another thread holds it.
    ///
    /// - Returns: What `body` returns, or `nil` if another thread held the lock.
    /// - Throws: What `body` throws.
    @inlinable
    public func tryWithLock<Result, Failure: Error>(
        _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result? {
        guard tryLock() else { return nil }
        defer { unlock() }
        return try body()
    }
}

// The platform mutex serialises every access to `depth`; `owner` is atomic.
extension RecursiveLock: @unchecked Sendable {}
