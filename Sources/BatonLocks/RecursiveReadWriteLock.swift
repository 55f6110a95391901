import Atomics
import CBatonPlatform

/// A writer-preferring reader-writer lock whose exclusive holder (its owner) may take it again,
/// on either side: the lock behind `@Synchronized`. (It was called `SynchronizedLock` in 1.0.)
///
/// Reads of one value take the shared side, so readers on several threads run in parallel.
/// Writes and composed operations take the exclusive side. The thread that holds the exclusive
/// side may call ``withLock(file:line:_:)`` or ``withReadLock(file:line:_:)`` again: the nested
/// section runs at once, inside the outer one, which is what lets a `@Synchronized` class's
/// methods use its properties and call each other under the lock.
///
/// ```swift
/// final class Account: Sendable {
///     private let lock = RecursiveReadWriteLock(name: "Account")
///     nonisolated(unsafe) private var balance = 0   // guarded by `lock`
///
///     var current: Int { lock.withReadLock { balance } }
///     func deposit(_ amount: Int) { lock.withLock { balance += amount } }
///     func depositTwice(_ amount: Int) {
///         lock.withLock {
///             deposit(amount)      // nested: runs inside this section
///             deposit(amount)
///         }
///     }
/// }
/// ```
///
/// Thread safety: every method may be called from any thread. Unlocking from a thread that does
/// not hold the exclusive side traps with a message, in every build.
///
/// - Warning: The shared side is not re-entrant for a thread that holds only the shared side:
///   taking either side again inside ``withReadLock(file:line:_:)`` (when not also holding the
///   exclusive side) deadlocks behind a waiting writer, as with ``ReadWriteLock``. Keep read
///   sections to reading.
public final class RecursiveReadWriteLock {
    @usableFromInline let rwlock: PlatformRWLock
    @usableFromInline let identity: LockIdentity
    /// The exclusive holder's thread, 0 otherwise. Only the holder writes it, so a thread that
    /// reads its own ID here holds the exclusive side.
    ///
    /// It and `depth` are written with every exclusive acquisition and release, and read by
    /// every thread that takes the lock: on Linux they live in the cache line of the lock's own
    /// state word, which the acquisition brings to the thread's core anyway, so that they cost
    /// no second line moving between cores under contention.
    @usableFromInline let owner: UnsafeAtomic<UInt>
    /// How many times the owner has entered the exclusive side with `lock(file:line:)` (1
    /// inside `withLock(file:line:_:)`). Guarded by the exclusive side; only the holder reads
    /// or writes it.
    @usableFromInline let depth: UnsafeMutablePointer<Int>

    /// Creates an unlocked lock.
    ///
    /// - Parameters:
    ///   - name: A name for ``LockDiagnostics`` reports and statistics; locks that share a name
    ///     share their statistics. `@Synchronized` names the lock after its class.
    ///   - file: The creation site's file, for diagnostics reports; leave the default.
    ///   - line: The creation site's line, for diagnostics reports; leave the default.
    public init(name: String? = nil, file: StaticString = #fileID, line: UInt = #line) {
        rwlock = PlatformRWLock()
        identity = LockIdentity(.synchronizedLock, name: name, file: file, line: line)
        #if canImport(Darwin)
        let side = UnsafeMutableRawPointer.allocate(byteCount: 16, alignment: 8)
        #else
        let side = rwlock.sideWords
        #endif
        owner = UnsafeAtomic(at: side.initializeMemory(as: UInt.AtomicRepresentation.self, to: .init(0)))
        depth = (side + 8).initializeMemory(as: Int.self, to: 0)
    }

    /// The name given at creation, if any.
    public var name: String? { identity.name }

    deinit {
        LockTracking.forget(self)
        #if canImport(Darwin)
        owner.destroy()  // the start of the block the owner and the depth share
        #endif
        rwlock.deallocate()
    }

    /// Whether the calling thread holds the exclusive side.
    @inlinable
    public var isHeldExclusivelyByCurrentThread: Bool {
        owner.load(ordering: .relaxed) == currentThreadID()
    }

    /// Runs `body` holding the shared side — or, when the calling thread holds the exclusive
    /// side, inside that section — and returns its result.
    ///
    /// - Parameters:
    ///   - file: The call site's file, for diagnostics reports; leave the default.
    ///   - line: The call site's line, for diagnostics reports; leave the default.
    ///   - body: The critical section: reads only.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws; the lock is released either way.
    @inlinable
    public func withReadLock<Result, Failure: Error>(
        file: StaticString = #fileID, line: UInt = #line,
        _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        if owner.load(ordering: .relaxed) == currentThreadID() { return try body() }
        rwlock.lockRead(for: self, identity, file: file, line: line)
        defer { rwlock.unlockRead(for: self) }
        return try body()
    }

    /// Runs `body` holding the exclusive side, and returns its result. A call nested in one of
    /// the same thread's exclusive sections runs `body` at once, inside that section.
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
        let me = currentThreadID()
        if !takeFreeLockAtOnce() {
            // Nested: the outer section releases the lock, so there is no depth to count.
            if owner.load(ordering: .relaxed) == me { return try body() }
            rwlock.lockWrite(for: self, identity, file: file, line: line)
        }
        owner.store(me, ordering: .relaxed)
        depth.pointee = 1
        defer {
            depth.pointee = 0
            owner.store(0, ordering: .relaxed)
            rwlock.unlockWrite(for: self)
        }
        return try body()
    }

    /// Takes the exclusive side at once if the lock is free and diagnostics are off: one
    /// compare-and-swap, before anything reads the owner. A lock held by the calling thread is
    /// not free, so the swap fails and the owner is read after it; read first, on a lock other
    /// threads contend for, it would cost its cache line a second trip.
    @inlinable
    func takeFreeLockAtOnce() -> Bool {
        _fastPath(baton_lock_diagnostics() == 0) && rwlock.tryLockWriteAtOnce()
    }

    /// Takes the exclusive side, or enters it once more if the calling thread holds it. Balance
    /// every call with ``unlock()``; prefer ``withLock(file:line:_:)``.
    ///
    /// - Parameters:
    ///   - file: The call site's file, for diagnostics reports; leave the default.
    ///   - line: The call site's line, for diagnostics reports; leave the default.
    @inlinable
    public func lock(file: StaticString = #fileID, line: UInt = #line) {
        let me = currentThreadID()
        if !takeFreeLockAtOnce() {
            if owner.load(ordering: .relaxed) == me {
                depth.pointee += 1
                return
            }
            rwlock.lockWrite(for: self, identity, file: file, line: line)
        }
        owner.store(me, ordering: .relaxed)
        depth.pointee = 1
    }

    /// Releases one entry to the exclusive side; the lock is free once every entry is released.
    ///
    /// - Warning: Traps if the calling thread does not hold the exclusive side.
    @inlinable
    public func unlock() {
        // fatalError rather than precondition: the message is printed in release builds too.
        if owner.load(ordering: .relaxed) != currentThreadID() {
            fatalError("RecursiveReadWriteLock: unlock() called from a thread that does not hold the lock.")
        }
        depth.pointee -= 1
        if depth.pointee == 0 {
            owner.store(0, ordering: .relaxed)
            rwlock.unlockWrite(for: self)
        }
    }
}

// The platform lock and the atomic owner do their own synchronisation; `depth` is touched only
// by the exclusive holder.
extension RecursiveReadWriteLock: @unchecked Sendable {}
