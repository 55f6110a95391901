import Atomics
import BatonInternals
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
    /// A node of a wait that ended with the lock handed over, kept for the next task that waits
    /// so that a contended lock does not allocate one per wait (see `recycle(_:)`).
    /// Held with one retain, as an address: a one-word exchange, where an atomic reference
    /// exchanges two words.
    let spareWaiter = UnsafeAtomic<UnsafeMutableRawPointer?>.create(nil)

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
        if let spare = spareWaiter.destroy() { Unmanaged<AsyncLockWaiter>.fromOpaque(spare).release() }
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
        return try await withLockSlowPath(timeout: nil, isolation: isolation, file: file, line: line, body)
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

    /// Everything ``withLock(isolation:file:line:_:)`` and ``withLock(timeout:isolation:file:line:_:)``
    /// do beyond their fast path: cancellation, re-entry, waiting (with a timeout, until it runs
    /// out), and the diagnostics.
    ///
    /// With every diagnostic off, the wait is written out here rather than left to the general
    /// path (`withLockSlowPath(deadline:…)`): each async frame and executor check between a
    /// handover and `body` is time the lock is held by no one, and this path holds no deadline of
    /// a generic clock and no clock reading.
    ///
    /// Inlinable, so that it is specialised for the caller's `Result` and `body` where it is
    /// called: compiled here, unspecialised, a contended section took four more task allocations
    /// and executor checks (its own frame, the body's, and generic values), about a tenth of
    /// what a contended section costs. Its steps around the wait stay out of line (below).
    @inlinable
    func withLockSlowPath<Result>(
        timeout: Duration?, isolation: isolated (any Actor)?, file: StaticString, line: UInt,
        _ body: () async throws -> Result
    ) async throws -> Result {
        guard baton_lock_diagnostics() == 0 else {
            return try await withLockDiagnosed(timeout: timeout, isolation: isolation, file: file, line: line, body)
        }
        if let waiter = try beginAcquire(flags: 0, file: file, line: line) {
            if let timeout { try armTimer(for: waiter, timeout: timeout) }
            await withTaskCancellationHandler(
                operation: {
                    await withUnsafeContinuation(isolation: isolation) { queue(waiter, $0) }
                },
                onCancel: { withdraw(waiter) },
                isolation: isolation)
            try endWait(waiter, timer: nil, timeout: timeout)
        }
        holderSite = (file, line)
        defer { release() }
        return try await body()
    }

    /// The lean slow path's way to the general one, while a diagnostic is on.
    @usableFromInline
    func withLockDiagnosed<Result>(
        timeout: Duration?, isolation: isolated (any Actor)?, file: StaticString, line: UInt,
        _ body: () async throws -> Result
    ) async throws -> Result {
        try await withLockSlowPath(
            deadline: timeout.map(WaitDeadline.init(timeout:)), isolation: isolation, file: file, line: line, body)
    }

    /// The slow path of the timed `withLock`, and of any `withLock` while a diagnostic is on:
    /// takes the lock, waiting for it if another task holds it (with a deadline, until then),
    /// runs `body` and releases the lock, keeping the diagnostics that are on.
    private func withLockSlowPath<Result>(
        deadline: WaitDeadline?, isolation: isolated (any Actor)?, file: StaticString, line: UInt,
        _ body: () async throws -> Result
    ) async throws -> Result {
        let flags = baton_lock_diagnostics() == 0 ? 0 : LockDiagnostics.flags()
        if let waiter = try beginAcquire(flags: flags, file: file, line: line) {
            let timer = try deadline.flatMap { try armTimer(for: waiter, deadline: $0) }
            let start: ContinuousClock.Instant? = flags & LockDiagnostics.statisticsBit != 0 ? .now : nil
            await withTaskCancellationHandler(
                operation: {
                    await withUnsafeContinuation(isolation: isolation) { queue(waiter, $0) }
                },
                onCancel: { withdraw(waiter) },
                isolation: isolation)
            try endWait(waiter, timer: timer, timeout: deadline?.timeout)
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

    // The steps of the slow paths around the wait are synchronous, not generic and never inlined:
    // inlined into an async function, values of resilient types (`UnsafeCurrentTask`,
    // `TaskPriority`) would each take an allocation from the task's allocator, where in a
    // function of their own they live on the thread's stack. They are `@usableFromInline` for
    // the inlinable slow path, and internal all the same.

    /// What the slow path does before it waits: the cancellation and order checks, and a try
    /// for the lock, which may have been freed since the fast path looked.
    ///
    /// - Parameter flags: The diagnostics on (``LockDiagnostics/flags()``), `0` for none.
    /// - Returns: `nil` if the lock is the caller's now; otherwise the waiter to queue.
    /// - Throws: `CancellationError`, or ``AsyncLockError`` if the task holds the lock already.
    @usableFromInline @inline(never)
    func beginAcquire(flags: UInt32, file: StaticString, line: UInt) throws -> AsyncLockWaiter? {
        // `withLock` is async, so it always runs in a task.
        let task = swift_task_getCurrent()!
        if swift_task_isCancelled(task) { throw CancellationError() }
        let owner = AsyncLockStateMachine.Owner(task: task)
        if flags & LockDiagnostics.orderBit != 0 {
            AsyncLockTracking.checkOrder(ObjectIdentifier(self), identity, file: file, line: line)
        }
        switch AsyncLockStateMachine.acquire(owner, word: word) {
        case .acquired:
            if flags & LockDiagnostics.statisticsBit != 0 { identity.counters?.record(contendedFor: nil) }
            return nil
        case .reentered:
            throw AsyncLockError(
                code: .reentry, lock: identity.description, firstTakenAt: SourceSite(holderSite.file, holderSite.line),
                takenAt: SourceSite(file, line))
        case .wait:
            let raw = UInt8(truncatingIfNeeded: swift_task_currentPriority(task))
            let priority = AsyncLockStateMachine.Priority(rawValue: raw)
            if let spare = spareWaiter.exchange(nil, ordering: .acquiring) {
                let waiter = Unmanaged<AsyncLockWaiter>.fromOpaque(spare).takeRetainedValue()
                waiter.reuse(owner: owner, priority: priority)
                return waiter
            }
            return AsyncLockWaiter(owner: owner, priority: priority)
        }
    }

    /// Arms the timer of a waiter that is about to queue with a deadline: on `ContinuousClock`
    /// the waiter's node itself (see `armNode(_:deadline:)`), on another clock a ``WaitTimer``,
    /// which a task sleeping on that clock fires.
    ///
    /// - Returns: The ``WaitTimer``, or `nil` if the node is the timer.
    /// - Throws: ``TimeoutError`` if the deadline has passed already: the lock is held, and a
    ///   wait that may not last stops at once.
    @inline(never)
    private func armTimer(for waiter: AsyncLockWaiter, deadline: WaitDeadline) throws -> WaitTimer? {
        if deadline.hasPassedNow {
            throw TimeoutError(operation: "AsyncLock.withLock", timeout: deadline.timeout)
        }
        guard let nanoseconds = deadline.continuousNanoseconds else {
            return deadline.armTimer(owner: self, waiter: waiter)
        }
        armNode(waiter, deadline: nanoseconds)
        return nil
    }

    /// As `armTimer(for:deadline:)`, for a timeout from now: one that is not positive has passed
    /// already, and the clock is read once, for the deadline; the node is the timer.
    @usableFromInline @inline(never)
    func armTimer(for waiter: AsyncLockWaiter, timeout: Duration) throws {
        guard timeout.isPositive else { throw TimeoutError(operation: "AsyncLock.withLock", timeout: timeout) }
        armNode(waiter, deadline: WaitDeadline.continuousDeadline(timeout: timeout))
    }

    /// Arms the waiter's node as its own timer in ``DeadlineTimers``: a timed wait then allocates
    /// nothing beyond the node (which a contended lock recycles). The node keeps the lock while
    /// it is armed, so that it fires into a live lock even as its waiter returns.
    private func armNode(_ waiter: AsyncLockWaiter, deadline: Int64) {
        waiter.deadline = deadline
        waiter.timedLock = self
        DeadlineTimers.shared.arm(waiter)
    }

    /// What a waiter's node does when its deadline comes: takes the waiter out of the queue and
    /// resumes it, unless it was handed the lock first.
    func expire(_ waiter: AsyncLockWaiter) {
        mutex.lock()
        waiter.expired = true
        let continuation = machine.cancel(waiter)
        mutex.unlock()
        continuation?.resume()
    }

    /// Queues a suspending waiter, or resumes it at once if the lock was freed meanwhile, or its
    /// cancellation handler or its timer withdrew it before it could queue.
    @usableFromInline @inline(never)
    func queue(_ waiter: AsyncLockWaiter, _ continuation: UnsafeContinuation<Void, Never>) {
        mutex.lock()
        switch machine.enqueue(waiter, continuation) {
        case .resumeNow:
            mutex.unlock()
            continuation.resume()
        case .wait(let donating):
            if let donating { raiseHolder(to: donating) }
            mutex.unlock()
        }
    }

    /// The cancellation handler of a waiter, and what its timer does when the time is up: takes
    /// the waiter out of the queue and resumes it, unless it was handed the lock first.
    @usableFromInline @inline(never)
    func withdraw(_ waiter: AsyncLockWaiter) {
        mutex.lock()
        let continuation = machine.cancel(waiter)
        mutex.unlock()
        continuation?.resume()
    }

    /// What a resumed waiter does: returns if it holds the lock, else throws why it does not.
    ///
    /// A waiter is taken out of the queue without the lock only by its cancellation handler or
    /// its timer, so a waiter whose task is not cancelled and whose timer never fired knows it
    /// was handed the lock without asking under the mutex; it loads the lock's word, which the
    /// releasing task stored, and so sees everything that task did in its critical section (as
    /// a lock's acquire must, and in a way Thread Sanitizer can see).
    ///
    /// - Throws: `CancellationError` if the task was cancelled before it was handed the lock (a
    ///   lock handed to it as it was cancelled is passed on); ``TimeoutError`` if the time ran
    ///   out first (a lock handed to it as the time ran out is kept).
    @usableFromInline @inline(never)
    func endWait(_ waiter: AsyncLockWaiter, timer: WaitTimer?, timeout: Duration?) throws {
        let timerStopped: Bool
        if let timer {
            timerStopped = timer.disarm()
        } else if waiter.timedLock != nil {
            timerStopped = DeadlineTimers.shared.disarm(waiter)
        } else {
            timerStopped = true
        }
        let cancelled = swift_task_isCancelled(waiter.owner.task)
        if timerStopped && !cancelled {
            _ = word.atomic.load(ordering: .acquiring)
            recycle(waiter)
            return
        }
        mutex.lock()
        let acquired = machine.takeOutcome(waiter)
        let expired = timer?.expired == true || waiter.expired
        mutex.unlock()
        if acquired {
            guard cancelled else { return }
            release()
            throw CancellationError()
        }
        if cancelled || !expired { throw CancellationError() }
        throw TimeoutError(operation: "AsyncLock.withLock", timeout: timeout)
    }

    /// Keeps the node of a wait that ended with the lock handed over, its timer disarmed and its
    /// task not cancelled, for the next task that waits. Nothing else touches it again: the
    /// queue let go of it at the handover, its timer will not fire, and its cancellation handler
    /// was removed without running (`withTaskCancellationHandler` has returned). It lets go of
    /// the lock, which keeps it now. A node kept before is released.
    private func recycle(_ waiter: AsyncLockWaiter) {
        waiter.timedLock = nil
        let kept = spareWaiter.exchange(Unmanaged.passRetained(waiter).toOpaque(), ordering: .acquiringAndReleasing)
        if let kept { Unmanaged<AsyncLockWaiter>.fromOpaque(kept).release() }
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

    /// The slow path of ``withLock(until:clock:isolation:file:line:_:)``.
    @usableFromInline
    func withLockSlowPath<C: Clock, Result>(
        until deadline: C.Instant, clock: C, isolation: isolated (any Actor)?, file: StaticString, line: UInt,
        _ body: () async throws -> Result
    ) async throws -> Result {
        try await withLockSlowPath(
            deadline: WaitDeadline(deadline, clock: clock, timeout: nil), isolation: isolation, file: file, line: line,
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
    func withdrawTimedOut(_ timer: WaitTimer) -> UnsafeContinuation<Void, Never>? {
        machine.cancel(unsafeDowncast(timer.waiter!, to: AsyncLockWaiter.self))
    }
}

// `word` is atomic; `mutex` guards `machine`; the holder alone touches `holderSite` (see there);
// `identity` never changes after init.
extension AsyncLock: @unchecked Sendable {}
