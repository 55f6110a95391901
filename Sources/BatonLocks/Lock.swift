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

    /// Runs `body` while holding the lock if the lock can be taken within `timeout`; returns
    /// `nil`, without running `body`, if the time runs out first.
    ///
    /// ```swift
    /// guard let entry = index.tryWithLock(timeout: .milliseconds(50), { table[key] }) else {
    ///     return .busy   // the lock stayed held for 50 ms: body did not run
    /// }
    /// ```
    ///
    /// On Linux the waiting thread parks on the lock's futex word with the time left as the
    /// kernel's timeout, worked out again from the deadline after every wake-up, so it uses no
    /// processor while it waits and takes the lock as soon as it is woken for it. On Darwin the
    /// lock is an `os_unfair_lock`, which has no timed acquire and tells no one but its own
    /// waiters of a release: there the call tries the lock, spins for about a microsecond, then
    /// sleeps between tries (each sleep twice the last, from 4 µs to at most 1 ms, never past
    /// the deadline). It then takes a freed lock within about a millisecond unless another thread
    /// takes it first, and unlike ``withLock(file:line:_:)`` does not raise the holder's priority
    /// while it waits.
    ///
    /// The lock is taken if it is free at any of the call's tries, and the last try is made when
    /// the time is up, so `nil` means the lock was held then. A lock freed just as the time runs
    /// out may still be taken. A zero or negative `timeout` makes one try without waiting, as
    /// ``tryWithLock(file:line:_:)`` does. A call that times out leaves the lock as it found it
    /// for every other thread: the waiters behind it are still woken in turn.
    ///
    /// ``LockDiagnostics`` treats the call as ``tryWithLock(file:line:_:)``, except that it checks
    /// re-entry as ``withLock(file:line:_:)`` does. The statistics count the acquisition, as
    /// contended with its wait if the first try failed; a call that times out counts nowhere. It
    /// records no lock order, since it gives up at its deadline instead of deadlocking (a lock
    /// taken in `body` is checked against it, though). Calling it on the thread that already
    /// holds the lock is the same mistake as nesting ``withLock(file:line:_:)``, and is reported
    /// the same way instead of waiting out the timeout: a debug build stops with the re-entry
    /// message, and with ``LockDiagnostics/checksLockOrder`` on the ``LockReentry`` is reported
    /// and the program stops. A release build with the check off waits out `timeout` and
    /// returns `nil`.
    ///
    /// It blocks the calling thread for up to `timeout`: in async code, prefer an ``AsyncLock``,
    /// whose waiters suspend.
    ///
    /// - Parameters:
    ///   - timeout: How long to wait for the lock at most.
    ///   - file: The call site's file, for diagnostics reports; leave the default.
    ///   - line: The call site's line, for diagnostics reports; leave the default.
    ///   - body: The critical section.
    /// - Returns: What `body` returns, or `nil` if the lock could not be taken in time.
    /// - Throws: What `body` throws.
    /// - Warning: Not re-entrant: calling it on the thread that holds the lock, for example
    ///   from inside `body`, is a programming error (traps in debug builds).
    @inlinable
    public func tryWithLock<Result, Failure: Error>(
        timeout: Duration, file: StaticString = #fileID, line: UInt = #line,
        _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result? {
        guard lock(timeout: timeout, file: file, line: line) else { return nil }
        defer { unlock() }
        return try body()
    }

    /// Acquires the lock unless `timeout` passes first; `true` if the caller now holds it.
    @usableFromInline
    func lock(timeout: Duration, file: StaticString, line: UInt) -> Bool {
        #if DEBUG
        let me = currentThreadID()
        if owner.load(ordering: .relaxed) == me {
            LockTracking.reentered(self, identity, file: file, line: line)
        }
        #endif
        guard mutex.lock(for: self, identity, timeout: timeout, file: file, line: line) else { return false }
        #if DEBUG
        owner.store(me, ordering: .relaxed)
        #endif
        return true
    }
}

// The platform mutex serialises every access; the stored properties never change after init.
extension Lock: @unchecked Sendable {}
