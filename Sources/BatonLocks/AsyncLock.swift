import Atomics
import CBatonPlatform

/// A mutual-exclusion lock for Swift concurrency: a critical section that may span `await`s.
///
/// An actor serialises its methods only between suspension points: while one call awaits,
/// another runs, so "check, await, update" interleaves (actor re-entrancy). A `DispatchSemaphore`
/// or `NSLock` held across the `await` blocks a thread of the cooperative pool and can stop every
/// task in the program. `AsyncLock` suspends the waiting task instead:
///
/// ```swift
/// actor TokenStore {
///     private var token: Token?
///     private let refreshing = AsyncLock(name: "token refresh")
///
///     /// However many callers arrive at once, the token is fetched once.
///     func validToken() async throws -> Token {
///         try await refreshing.withLock {
///             if let token, !token.isExpired { return token }
///             let fresh = try await api.fetchToken()     // other callers wait here
///             token = fresh
///             return fresh
///         }
///     }
/// }
/// ```
///
/// - **FIFO.** Waiting tasks take the lock in the order they asked for it; the lock is handed
///   from the releasing task straight to the first waiter.
/// - **Cancellation loses nothing.** A task cancelled while it waits leaves the queue and throws
///   `CancellationError` without running its body; a task already cancelled throws at once. A
///   lock handed to a task at the moment it is cancelled is passed on to the next waiter.
/// - **No thread is blocked.** A waiting task is suspended; its thread runs other work.
/// - **Waits that end.** ``withLock(timeout:isolation:file:line:_:)`` and
///   ``withLock(until:clock:isolation:file:line:_:)`` throw ``TimeoutError`` if the lock is not
///   handed over in time, without running the body; the lock is never lost.
/// - **Priority donation.** A waiting task of higher priority raises the holder's task to its
///   priority (where the runtime offers `UnsafeCurrentTask.escalatePriority(to:)`: Linux, and
///   Apple releases from macOS 26 and iOS 26; on older ones donation is skipped).
/// - **Diagnostics.** A named lock appears under its name in ``LockDiagnostics`` reports and
///   statistics; AB/BA orders between `AsyncLock`s taken by different tasks are reported, as for
///   the sync locks, before they deadlock, and long holds are reported.
///
/// Thread safety: every method may be called from any task. A free lock is taken, and a lock no
/// task waits for is released, with one atomic operation each; the waiters are guarded by a
/// Baton futex lock held for a few instructions, and continuations are resumed after it is
/// released.
///
/// - Warning: Not re-entrant. A task that calls ``withLock(isolation:file:line:_:)`` on a lock
///   it already holds gets an ``AsyncLockError`` with code ``AsyncLockError/Code/reentry``
///   instead of waiting for itself forever. A child task started inside the critical section
///   that takes the same lock waits for its parent to release it, which deadlocks if the parent
///   awaits the child inside the section.
public final class AsyncLock {
    /// Who holds the lock: atomic, taken and freed without the mutex on the fast paths (see
    /// `AsyncLockWord`); `machine` keeps the same word and changes it under `mutex`.
    @usableFromInline let word = AsyncLockWord()
    /// Guards `machine`.
    let mutex = PlatformMutex()
    /// Guarded by `mutex`. The mutex, not the runtime's exclusivity check, keeps accesses apart.
    @exclusivity(unchecked) private var machine: AsyncLockStateMachine
    /// Where the holder took the lock, for the re-entry error. Written by each task once it holds
    /// the lock and read only by the holder itself, when it re-enters: taking and handing over
    /// the lock orders the accesses, so it needs no lock of its own.
    @usableFromInline @exclusivity(unchecked) var holderSite: (file: StaticString, line: UInt) = ("", 0)
    /// Never changes after init; needs no lock.
    let identity: LockIdentity
    /// The IDs under which waiters queue, so that a cancellation handler or a timer can find its
    /// waiter. Atomic; needs no lock.
    private let lastID = UnsafeAtomic<UInt64>.create(0)

    /// Creates an unlocked lock.
    ///
    /// - Parameters:
    ///   - name: A name for ``LockDiagnostics`` reports and statistics, and for
    ///     ``AsyncLockError``; locks that share a name share their statistics.
    ///   - file: The creation site's file, for reports; leave the default.
    ///   - line: The creation site's line, for reports; leave the default.
    public init(name: String? = nil, file: StaticString = #fileID, line: UInt = #line) {
        identity = LockIdentity(.asyncLock, name: name, file: file, line: line)
        machine = AsyncLockStateMachine(word: word)
    }

    /// The name given at creation, if any.
    public var name: String? { identity.name }

    deinit {
        LockTracking.forget(self)
        word.destroy()
        lastID.destroy()
        mutex.deallocate()
    }

    /// Runs `body` while holding the lock, and returns its result; `body` may suspend.
    ///
    /// If another task holds the lock, the calling task waits (suspended, in FIFO order) until
    /// the lock is handed to it. The lock is released when `body` returns or throws.
    ///
    /// - Parameters:
    ///   - isolation: The caller's actor, inherited so that `body` runs on it; leave the default.
    ///   - file: The call site's file, for reports; leave the default.
    ///   - line: The call site's line, for reports; leave the default.
    ///   - body: The critical section.
    /// - Returns: What `body` returns.
    /// - Throws: `CancellationError` if the task is cancelled before it gets the lock (`body`
    ///   does not run then); ``AsyncLockError`` (``AsyncLockError/Code/reentry``) if the task
    ///   already holds this lock; otherwise what `body` throws.
    /// - Warning: Not re-entrant (see ``AsyncLock``).
    @inlinable
    public func withLock<Result>(
        isolation: isolated (any Actor)? = #isolation,
        file: StaticString = #fileID, line: UInt = #line,
        _ body: () async throws -> Result
    ) async throws -> Result {
        if _fastPath(tryTakeFreeLockQuietly(file: file, line: line)) {
            defer { release() }
            return try await body()
        }
        return try await withLockSlowPath(isolation: isolation, file: file, line: line, body)
    }

    /// Takes the lock if it is free, the task is not cancelled and every diagnostic is off: the
    /// fast path, with no suspension and no mutex.
    @inlinable
    func tryTakeFreeLockQuietly(file: StaticString, line: UInt) -> Bool {
        guard baton_lock_diagnostics() == 0 else { return false }
        // The runtime's own calls, not `withUnsafeCurrentTask` (see CBatonPlatform.h); the task
        // pointer is what an `UnsafeCurrentTask` holds, so its bits are the owner's.
        // `withLock` is async, so it always runs in a task.
        guard let task = swift_task_getCurrent(), !swift_task_isCancelled(task),
            word.tryTake(UInt(bitPattern: task))
        else { return false }
        holderSite = (file, line)
        return true
    }

    /// Everything ``withLock(isolation:file:line:_:)`` does beyond its fast path: cancellation,
    /// re-entry, waiting, and the diagnostics.
    @usableFromInline
    func withLockSlowPath<Result>(
        isolation: isolated (any Actor)?, file: StaticString, line: UInt,
        _ body: () async throws -> Result
    ) async throws -> Result {
        try await withLockSlowPath(isolation: isolation, file: file, line: line, deadline: nil, body)
    }

    /// The slow path of the untimed and the timed ``withLock(isolation:file:line:_:)``; with a
    /// deadline, the wait for the lock (not `body`) ends with ``TimeoutError`` when it comes.
    private func withLockSlowPath<Result>(
        isolation: isolated (any Actor)?, file: StaticString, line: UInt, deadline: WaitDeadline?,
        _ body: () async throws -> Result
    ) async throws -> Result {
        if Task.isCancelled { throw CancellationError() }
        let flags = baton_lock_diagnostics() == 0 ? 0 : LockDiagnostics.flags()
        let owner = withUnsafeCurrentTask { task in
            // `withLock` is async, so it always runs in a task.
            AsyncLockStateMachine.Owner(task: task!)
        }
        if flags & LockDiagnostics.orderBit != 0 {
            AsyncLockTracking.checkOrder(ObjectIdentifier(self), identity, file: file, line: line)
        }
        switch AsyncLockStateMachine.acquire(owner, word: word) {
        case .acquired:
            if flags & LockDiagnostics.statisticsBit != 0 { identity.counters?.record(contendedFor: nil) }
        case .reentered:
            throw AsyncLockError(
                code: .reentry, lock: identity.description, firstTakenAt: SourceSite(holderSite.file, holderSite.line),
                takenAt: SourceSite(file, line))
        case .wait:
            let id = lastID.loadThenWrappingIncrement(ordering: .relaxed)
            let counted = flags & LockDiagnostics.statisticsBit != 0
            let start: ContinuousClock.Instant? = counted ? .now : nil
            try await suspend(owner, id: id, deadline: deadline, isolation: isolation)
            if let start { identity.counters?.record(contendedFor: .now - start) }
        }
        holderSite = (file, line)
        guard flags != 0 else {
            defer { release() }
            return try await body()
        }
        let since: ContinuousClock.Instant? = flags & LockDiagnostics.holdTimeBit != 0 ? .now : nil
        defer {
            release()
            if let since { AsyncLockTracking.reportHold(identity, since: since, file: file, line: line) }
        }
        guard flags & LockDiagnostics.orderBit != 0 else { return try await body() }
        let held = AsyncLockTracking.pushing(ObjectIdentifier(self), identity, file: file, line: line)
        return try await AsyncLockTracking.$held.withValue(held, operation: body, isolation: isolation)
    }

    /// The slow path of ``withLock(isolation:file:line:_:)``: queue and suspend until the lock
    /// is handed over, the task is cancelled or (with a deadline) the time runs out.
    private func suspend(
        _ owner: AsyncLockStateMachine.Owner, id: UInt64, deadline: WaitDeadline?, isolation: isolated (any Actor)?
    ) async throws {
        if let deadline, deadline.hasPassedNow {
            throw TimeoutError(operation: "AsyncLock.withLock", timeout: deadline.timeout)
        }
        let timer = deadline?.armTimer(owner: self, id: id)
        let (acquired, expired) = await suspendAsWaiter(isolation: isolation) { continuation in
            let enqueue = machine.enqueue(
                continuation, owner: owner, priority: Task.currentPriority, id: id,
                cancelled: Task.isCancelled || timer?.expired == true)
            switch enqueue {
            case .resumeNow(let now):
                return now
            case .wait(let donating):
                if let donating { raiseHolder(to: donating) }
                return nil
            }
        } cancel: {
            machine.cancel(id: id)
        } takeOutcome: {
            (machine.takeOutcome(id: id), timer?.expired == true)
        }
        timer?.disarm()
        if acquired {
            // Handed the lock as the task was being cancelled: pass it on instead of running a
            // cancelled task's critical section. Handed it as the time ran out: keep it.
            guard Task.isCancelled else { return }
            release()
            throw CancellationError()
        }
        if Task.isCancelled || !expired { throw CancellationError() }
        throw TimeoutError(operation: "AsyncLock.withLock", timeout: deadline?.timeout)
    }

    /// Releases the lock: frees it with one atomic operation if no task waits, else hands it over
    /// through the mutex.
    @inlinable
    func release() {
        if _fastPath(word.tryFree()) { return }
        releaseThroughMutex()
    }

    /// The slow path of `release()`: a task waits, or waited. Out of line, so that the fast path
    /// carries none of its set-up.
    @usableFromInline
    @inline(never)
    func releaseThroughMutex() {
        mutex.lock()
        switch machine.release() {
        case .free:
            mutex.unlock()
        case .handOver(let next, let donating):
            if let donating { raiseHolder(to: donating) }
            mutex.unlock()
            next.resume()
        }
    }

    /// Donates `priority` to the task holding the lock. Called under `mutex`, with the word's
    /// waiters bit set: the holder is alive while it is the holder, and it cannot stop being the
    /// holder without the mutex.
    private func raiseHolder(to priority: AsyncLockStateMachine.Priority) {
        let holder = word.holder
        guard holder != 0 else { return }
        machine.donated(holderPriority: withTask(holder) { donate(priority.taskPriority, to: $0) })
    }

    /// The tasks waiting now (for tests; it may change as soon as it is read).
    var waitingCount: Int {
        mutex.lock()
        defer { mutex.unlock() }
        return machine.waitingCount
    }

    /// Whether a task holds the lock now (for tests; it may change as soon as it is read).
    var isHeld: Bool {
        word.holder != 0
    }
}

// MARK: Timed waits

extension AsyncLock {
    /// Runs `body` while holding the lock, waiting at most `timeout` for it.
    ///
    /// As ``withLock(isolation:file:line:_:)``, with a limit on the wait (not on `body`, which
    /// runs for as long as it takes once the lock is held): a task that times out leaves the
    /// queue without running `body`, and the lock is never lost, exactly as for a cancelled
    /// one. A lock handed to the task at the moment its time runs out is kept, and `body` runs.
    /// A free lock is taken even with a zero or negative timeout.
    ///
    /// While the task waits, one timer is armed for it (an entry in a Dispatch timer that the
    /// process's timed waits share), and disarmed as soon as the wait ends; a call that finds the
    /// lock free arms none.
    ///
    /// - Parameters:
    ///   - timeout: How long to wait for the lock at most.
    ///   - isolation: The caller's actor, inherited so that `body` runs on it; leave the default.
    ///   - file: The call site's file, for reports; leave the default.
    ///   - line: The call site's line, for reports; leave the default.
    ///   - body: The critical section.
    /// - Returns: What `body` returns.
    /// - Throws: ``TimeoutError`` if the lock was not handed over within `timeout`;
    ///   `CancellationError` if the task is cancelled before it gets the lock; ``AsyncLockError``
    ///   if the task already holds it; otherwise what `body` throws.
    @inlinable
    public func withLock<Result>(
        timeout: Duration,
        isolation: isolated (any Actor)? = #isolation,
        file: StaticString = #fileID, line: UInt = #line,
        _ body: () async throws -> Result
    ) async throws -> Result {
        if _fastPath(tryTakeFreeLockQuietly(file: file, line: line)) {
            defer { release() }
            return try await body()
        }
        return try await withLockSlowPath(timeout: timeout, isolation: isolation, file: file, line: line, body)
    }

    /// Runs `body` while holding the lock, waiting for it until `deadline` on `clock` at most.
    ///
    /// As ``withLock(timeout:isolation:file:line:_:)``, with a deadline on a clock of the
    /// caller's choice (a manual clock in tests).
    ///
    /// - Parameters:
    ///   - deadline: When to stop waiting for the lock.
    ///   - clock: The clock `deadline` is on; the wait's timer sleeps on it.
    ///   - isolation: The caller's actor; leave the default.
    ///   - file: The call site's file, for reports; leave the default.
    ///   - line: The call site's line, for reports; leave the default.
    ///   - body: The critical section.
    /// - Returns: What `body` returns.
    /// - Throws: ``TimeoutError``, `CancellationError`, ``AsyncLockError``, or what `body` throws,
    ///   as ``withLock(timeout:isolation:file:line:_:)``.
    @inlinable
    public func withLock<C: Clock, Result>(
        until deadline: C.Instant, clock: C,
        isolation: isolated (any Actor)? = #isolation,
        file: StaticString = #fileID, line: UInt = #line,
        _ body: () async throws -> Result
    ) async throws -> Result {
        if _fastPath(tryTakeFreeLockQuietly(file: file, line: line)) {
            defer { release() }
            return try await body()
        }
        return try await withLockSlowPath(
            until: deadline, clock: clock, isolation: isolation, file: file, line: line, body)
    }

    /// The slow path of ``withLock(timeout:isolation:file:line:_:)``, out of line: the fast path
    /// inlined into the caller reads no clock and needs no frame of its own, exactly as the
    /// untimed `withLock`'s.
    @usableFromInline
    func withLockSlowPath<Result>(
        timeout: Duration, isolation: isolated (any Actor)?, file: StaticString, line: UInt,
        _ body: () async throws -> Result
    ) async throws -> Result {
        try await withLockSlowPath(
            isolation: isolation, file: file, line: line, deadline: WaitDeadline(timeout: timeout), body)
    }

    /// The slow path of ``withLock(until:clock:isolation:file:line:_:)``.
    @usableFromInline
    func withLockSlowPath<C: Clock, Result>(
        until deadline: C.Instant, clock: C, isolation: isolated (any Actor)?, file: StaticString, line: UInt,
        _ body: () async throws -> Result
    ) async throws -> Result {
        try await withLockSlowPath(
            isolation: isolation, file: file, line: line, deadline: WaitDeadline(deadline, clock: clock, timeout: nil),
            body)
    }
}

/// Runs `body` with a handle to the task whose handle bits these are; only while the task is alive.
private func withTask<Result>(_ taskBits: UInt, _ body: (UnsafeCurrentTask) -> Result) -> Result {
    withUnsafeTemporaryAllocation(of: UInt.self, capacity: 1) { buffer in
        buffer[0] = taskBits
        // A copy of the handle, retained and released like any copy: balanced.
        return body(UnsafeRawPointer(buffer.baseAddress!).load(as: UnsafeCurrentTask.self))
    }
}

extension AsyncLock: TimedWaiterOwner {
    func withdrawTimedOut(id: UInt64) -> UnsafeContinuation<Void, Never>? {
        machine.cancel(id: id)
    }
}

// `word` is atomic; `mutex` guards `machine`; the holder alone touches `holderSite` (see there);
// `identity` never changes after init.
extension AsyncLock: @unchecked Sendable {}
