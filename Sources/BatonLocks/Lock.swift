import CBatonPlatform

#if DEBUG
import Atomics
#endif

/// A non-recursive mutual-exclusion lock.
///
/// `Lock` is the building block for guarding a small piece of shared state: one thread at a time
/// runs inside ``withLock(file:line:_:)``. It is a class, so it can be shared by reference and is never
/// copied by accident (the hazard of a raw `pthread_mutex_t` or `os_unfair_lock` stored in a
/// struct).
///
/// ```swift
/// final class Counter: Sendable {
///     private let lock = Lock()
///     nonisolated(unsafe) private var value = 0   // guarded by `lock`
///
///     func increment() -> Int {
///         lock.withLock {
///             value += 1
///             return value
///         }
///     }
/// }
/// ```
///
/// The class is `Sendable`, not `@unchecked Sendable`: the compiler still checks every other
/// stored property, and `nonisolated(unsafe)` exempts only the one the lock guards. Where the
/// state can move into one value, prefer ``Protected``: then nothing is exempt.
///
/// On Linux it is a futex word with a short bounded spin (it stays fast when there are many more
/// threads than cores, where `Synchronization.Mutex` collapses); on Darwin an `os_unfair_lock`.
/// It is not fair: a running thread may take the lock ahead of a parked one, which is what keeps
/// its throughput high under contention.
///
/// Thread safety: every method may be called from any thread.
///
/// In debug builds, re-locking a `Lock` on the thread that holds it and unlocking a `Lock` that
/// the calling thread does not hold stop the program with a message saying so, instead of a
/// silent deadlock or corrupted state. Release builds do not check. ``LockDiagnostics`` adds a
/// lock-order checker (on by default in debug builds), hold-time warnings and contention
/// statistics; give the lock a `name` to make their reports easier to read.
///
/// - Warning: `Lock` is not re-entrant. Calling ``withLock(file:line:_:)`` on the same lock from inside its
///   own body deadlocks (traps in debug builds). Use ``RecursiveLock`` when a method that holds
///   the lock must call another that takes it.
public final class Lock {
    @usableFromInline let mutex: PlatformMutex
    @usableFromInline let identity: LockIdentity
    #if DEBUG
    /// The holder's thread, for the debug misuse checks; written only by the holder.
    @usableFromInline let owner: UnsafeAtomic<UInt>
    #endif

    /// Creates an unlocked lock.
    ///
    /// - Parameters:
    ///   - name: A name for ``LockDiagnostics`` reports and statistics; locks that share a name
    ///     share their statistics.
    ///   - file: The creation site's file, for diagnostics reports; leave the default.
    ///   - line: The creation site's line, for diagnostics reports; leave the default.
    public init(name: String? = nil, file: StaticString = #fileID, line: UInt = #line) {
        mutex = PlatformMutex()
        identity = LockIdentity(.lock, name: name, file: file, line: line)
        #if DEBUG
        owner = .create(0)
        #endif
    }

    /// The name given at creation, if any.
    public var name: String? { identity.name }

    deinit {
        LockTracking.forget(self)
        mutex.deallocate()
        #if DEBUG
        owner.destroy()
        #endif
    }

    /// Acquires the lock, waiting as long as another thread holds it.
    ///
    /// Prefer ``withLock(file:line:_:)``, which cannot forget to unlock. Every `lock()` must be balanced
    /// by an ``unlock()`` on the same thread.
    ///
    /// - Parameters:
    ///   - file: The call site's file, for diagnostics reports; leave the default.
    ///   - line: The call site's line, for diagnostics reports; leave the default.
    /// - Warning: Calling `lock()` on the thread that already holds the lock deadlocks; in
    ///   debug builds it traps with a message instead.
    @inlinable
    public func lock(file: StaticString = #fileID, line: UInt = #line) {
        #if DEBUG
        let me = currentThreadID()
        if owner.load(ordering: .relaxed) == me {
            LockTracking.reentered(self, identity, file: file, line: line)
        }
        #endif
        mutex.lock(for: self, identity, file: file, line: line)
        #if DEBUG
        owner.store(me, ordering: .relaxed)
        #endif
    }

    /// Acquires the lock if no thread holds it, without waiting.
    ///
    /// - Parameters:
    ///   - file: The call site's file, for diagnostics reports; leave the default.
    ///   - line: The call site's line, for diagnostics reports; leave the default.
    /// - Returns: `true` if the caller now holds the lock and must call ``unlock()``.
    @inlinable
    public func tryLock(file: StaticString = #fileID, line: UInt = #line) -> Bool {
        guard mutex.tryLock(for: self, identity, file: file, line: line) else { return false }
        #if DEBUG
        owner.store(currentThreadID(), ordering: .relaxed)
        #endif
        return true
    }

    /// Releases the lock, which the calling thread must hold.
    ///
    /// - Warning: Unlocking a lock that the calling thread does not hold is undefined behaviour;
    ///   in debug builds it traps with a message.
    @inlinable
    public func unlock() {
        #if DEBUG
        let holder = owner.load(ordering: .relaxed)
        if holder != currentThreadID() {
            fatalError(
                holder == 0
                    ? "Lock: unlock() called on a lock that is not locked."
                    : "Lock: unlock() called from a thread that does not hold the lock.")
        }
        owner.store(0, ordering: .relaxed)
        #endif
        mutex.unlock(for: self)
    }

    /// Runs `body` while holding the lock, and returns its result.
    ///
    /// The lock is released when `body` returns or throws.
    ///
    /// - Parameters:
    ///   - file: The call site's file, for diagnostics reports; leave the default.
    ///   - line: The call site's line, for diagnostics reports; leave the default.
    ///   - body: The critical section. Keep it short; do not call code that may take this lock
    ///     again.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    /// - Warning: Not re-entrant: taking the same lock inside `body` deadlocks (traps in debug
    ///   builds).
    @inlinable
    public func withLock<Result, Failure: Error>(
        file: StaticString = #fileID, line: UInt = #line,
        _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        lock(file: file, line: line)
        defer { unlock() }
        return try body()
    }

    /// Runs `body` while holding the lock if the lock is free; returns `nil` at once, without
    /// running `body`, if another thread holds it.
    ///
    /// - Parameters:
    ///   - file: The call site's file, for diagnostics reports; leave the default.
    ///   - line: The call site's line, for diagnostics reports; leave the default.
    ///   - body: The critical section.
    /// - Returns: What `body` returns, or `nil` if the lock was held.
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

// The platform mutex serialises every access; the stored properties never change after init.
extension Lock: @unchecked Sendable {}
