import Atomics

/// A counting semaphore for Swift concurrency: at most `value` tasks hold a permit at once, and
/// the others wait without blocking a thread.
///
/// Use it to bound concurrency — "at most 4 downloads at once" — where a `DispatchSemaphore`
/// would block a thread of the cooperative pool for every waiting task:
///
/// ```swift
/// let downloads = AsyncSemaphore(value: 4)
///
/// try await withThrowingTaskGroup(of: Data.self) { group in
///     for url in urls {
///         group.addTask {
///             try await downloads.withPermit { try await fetch(url) }
///         }
///     }
///     for try await data in group { store(data) }
/// }
/// ```
///
/// - **FIFO.** Waiting tasks get permits in the order they called ``wait(isolation:)``; a task
///   that arrives while others wait queues behind them, even if a permit is momentarily free.
/// - **Cancellation loses nothing.** A task cancelled while it waits leaves the queue and throws
///   `CancellationError` at once; a task already cancelled when it calls ``wait(isolation:)``
///   throws without taking a permit, as `Task.sleep` does. A permit handed to a waiter at the
///   moment it is cancelled (a ``signal()`` already on its way to it) is passed on to the next
///   waiter, so the count never drifts.
/// - **No thread is blocked.** A waiting task is suspended; its thread runs other work.
/// - **Waits that end.** ``wait(timeout:isolation:)`` and ``wait(until:clock:isolation:)`` throw
///   ``TimeoutError`` when the time is up; a waiter that times out takes nothing, as a cancelled
///   one, and a permit handed to it as its time runs out is kept (the wait returns).
/// - **A counting semaphore.** ``signal()`` may be called more often than ``wait(isolation:)``:
///   each extra signal adds a permit, beyond the initial value.
///
/// Permits have no owner (any task may signal), so a waiter's priority is not donated to the
/// tasks holding permits; use ``AsyncLock`` for a critical section, which donates it.
///
/// Thread safety: every method may be called from any thread or task. The state is guarded by
/// a Baton futex lock held for a few instructions; continuations are resumed after it is
/// released.
public final class AsyncSemaphore {
    /// Free permits when positive; otherwise minus the tasks registered as waiting (see
    /// `AsyncSemaphoreStateMachine`). Atomic: taken and returned without the mutex on the fast
    /// paths; changed under `mutex` on the slow ones.
    @usableFromInline let count: UnsafeAtomic<Int>
    /// Guards `machine`.
    let mutex = PlatformMutex()
    /// Guarded by `mutex`. The mutex, not the runtime's exclusivity check, keeps accesses apart.
    @exclusivity(unchecked) private var machine = AsyncSemaphoreStateMachine()
    /// The IDs under which waiters queue, so that a cancellation handler can find its waiter.
    /// Atomic; needs no lock.
    private let lastID: UnsafeAtomic<UInt64>

    /// Creates a semaphore with `value` permits.
    ///
    /// - Parameter value: The permits free at the start: how many tasks may hold one at once.
    ///   `0` makes a semaphore that tasks wait on until someone calls ``signal()``.
    /// - Precondition: `value >= 0`.
    public init(value: Int) {
        precondition(value >= 0, "AsyncSemaphore: the initial value must not be negative (got \(value))")
        count = .create(value)
        lastID = .create(0)
    }

    /// Free permits when positive, minus the waiting tasks when negative, at this moment: what
    /// `MetricsReporter` samples.
    package var permitsLessWaiters: Int { count.load(ordering: .relaxed) }

    deinit {
        count.destroy()
        lastID.destroy()
        mutex.deallocate()
    }

    /// Takes a permit, suspending the calling task until one is free.
    ///
    /// Returns at once when a permit is free and no task is waiting: one atomic operation, no
    /// lock, no suspension. Otherwise the task queues behind the earlier waiters and suspends;
    /// no thread is blocked meanwhile.
    ///
    /// - Parameter isolation: The caller's actor, inherited so that calling from an actor does
    ///   not hop off it; leave the default.
    /// - Throws: `CancellationError` if the task is cancelled before or while it waits; it then
    ///   holds no permit and must not call ``signal()`` for this wait.
    @inlinable
    public func wait(isolation: isolated (any Actor)? = #isolation) async throws(CancellationError) {
        if Task.isCancelled { throw CancellationError() }
        if _fastPath(tryTakeFreePermit()) { return }
        try await suspend(isolation: isolation)
    }

    /// Takes a permit if one is free (and so no task waits).
    @inlinable
    func tryTakeFreePermit() -> Bool {
        var current = count.load(ordering: .relaxed)
        while current > 0 {
            let (exchanged, original) = count.weakCompareExchange(
                expected: current, desired: current - 1, successOrdering: .acquiringAndReleasing,
                failureOrdering: .relaxed)
            if exchanged { return true }
            current = original
        }
        return false
    }

    /// The slow path of ``wait(isolation:)``: register, queue and suspend until a permit or a
    /// cancellation.
    @usableFromInline
    func suspend(isolation: isolated (any Actor)?) async throws(CancellationError) {
        let id = lastID.loadThenWrappingIncrement(ordering: .relaxed)
        let (acquired, _) = await waitForPermit(id: id, timer: nil, isolation: isolation)
        guard acquired else { throw CancellationError() }
        if Task.isCancelled {
            // Handed a permit as the task was being cancelled: pass it on rather than run a
            // cancelled task's work under it.
            signal()
            throw CancellationError()
        }
    }

    /// Queues the waiter with this ID and suspends until it is handed a permit, or its task is
    /// cancelled, or (with a `timer`) its deadline comes.
    ///
    /// - Returns: Whether it holds a permit, and whether its timer had fired by the time it was
    ///   resumed.
    private func waitForPermit(
        id: UInt64, timer: WaitTimer?, isolation: isolated (any Actor)?
    ) async -> (acquired: Bool, expired: Bool) {
        await suspendAsWaiter(isolation: isolation) { continuation in
            let gone = Task.isCancelled || timer?.expired == true
            switch machine.register(continuation, id: id, cancelled: gone) {
            case .resumeNow(let now):
                return now
            case .decrementCount:
                let permitFree = count.loadThenWrappingDecrement(ordering: .acquiringAndReleasing) > 0
                return machine.registered(continuation, id: id, permitFree: permitFree)
            }
        } cancel: {
            self.withdraw(id: id)
        } takeOutcome: {
            (machine.takeOutcome(id: id), timer?.expired == true)
        }
    }

    /// Takes out a waiter that is to stop waiting (cancelled, or timed out), under `mutex`; `nil`
    /// if it was already handed a permit, or if every queued waiter is owed one (it then stays
    /// queued and gets its permit).
    private func withdraw(id: UInt64) -> UnsafeContinuation<Void, Never>? {
        switch machine.cancel(id: id) {
        case .notQueued: nil
        case .withdrawRegistration: withdrawRegistration() ? machine.withdrawn(id: id) : nil
        }
    }

    /// Takes back one registration that no signal has claimed (the count is negative), for a
    /// cancelled waiter; `false` if every registration is claimed. Called under `mutex`, while
    /// only signals change the count, and only upwards.
    private func withdrawRegistration() -> Bool {
        var current = count.load(ordering: .acquiring)
        while current < 0 {
            let (exchanged, original) = count.weakCompareExchange(
                expected: current, desired: current + 1, successOrdering: .acquiringAndReleasing,
                failureOrdering: .acquiring)
            if exchanged { return true }
            current = original
        }
        return false
    }

    /// Returns a permit: resumes the first waiting task with it, or keeps it for the next
    /// ``wait(isolation:)`` if no task waits.
    ///
    /// Never suspends or blocks; may be called from synchronous code on any thread. With no task
    /// waiting it is one atomic operation. Calling it more often than ``wait(isolation:)`` adds
    /// permits beyond the initial value.
    ///
    /// - Returns: `true` if it resumed a waiting task.
    @inlinable
    @discardableResult
    public func signal() -> Bool {
        if _fastPath(count.loadThenWrappingIncrement(ordering: .acquiringAndReleasing) >= 0) { return false }
        return resumeFirstWaiter()
    }

    /// The slow path of ``signal()``: the count said a task waits; hand it the permit.
    @usableFromInline
    func resumeFirstWaiter() -> Bool {
        mutex.lock()
        let waiter = machine.popFirst()
        mutex.unlock()
        guard let waiter else { return false }
        waiter.resume()
        return true
    }

    /// Runs `body` while holding a permit, and returns its result.
    ///
    /// The permit is returned when `body` returns or throws.
    ///
    /// - Parameters:
    ///   - isolation: The caller's actor, inherited so that `body` runs on it; leave the default.
    ///   - body: The work to bound.
    /// - Returns: What `body` returns.
    /// - Throws: `CancellationError` if the task is cancelled before it gets a permit (`body`
    ///   does not run then), or what `body` throws.
    @inlinable
    public func withPermit<Result>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws -> Result
    ) async throws -> Result {
        try await wait(isolation: isolation)
        defer { signal() }
        return try await body()
    }

    /// The tasks waiting now (for tests and diagnostics; it may change as soon as it is read).
    var waitingCount: Int {
        mutex.lock()
        defer { mutex.unlock() }
        return machine.waitingCount
    }

    /// The permits free now (for tests; it may change as soon as it is read).
    var freePermits: Int {
        max(0, count.load(ordering: .acquiring))
    }
}

// MARK: Timed waits

extension AsyncSemaphore {
    /// Takes a permit, suspending the calling task until one is free or `timeout` has passed.
    ///
    /// As ``wait(isolation:)``, with a limit: a waiter that times out leaves the queue and takes
    /// nothing, exactly as a cancelled one. A permit handed to it at the moment its time runs
    /// out (a ``signal()`` already on its way to it) is kept: the wait then returns normally, and
    /// the caller holds the permit. A permit free on arrival is taken even with a zero or
    /// negative timeout, as `DispatchSemaphore.wait(timeout:)` does.
    ///
    /// While the task waits, one timer is armed for it (an entry in a Dispatch timer that the
    /// process's timed waits share), and disarmed as soon as the wait ends; a wait that does not
    /// suspend arms none.
    ///
    /// ```swift
    /// do {
    ///     try await connections.wait(timeout: .seconds(2))
    /// } catch is TimeoutError {
    ///     throw ServiceError.overloaded       // shed load instead of queueing for ever
    /// }
    /// defer { connections.signal() }
    /// ```
    ///
    /// - Parameters:
    ///   - timeout: How long to wait at most.
    ///   - isolation: The caller's actor, inherited so that calling from an actor does not hop
    ///     off it; leave the default.
    /// - Throws: ``TimeoutError`` if no permit came within `timeout`; `CancellationError` if the
    ///   task is cancelled before or while it waits. Either way it holds no permit and must not
    ///   call ``signal()`` for this wait.
    @inlinable
    public func wait(timeout: Duration, isolation: isolated (any Actor)? = #isolation) async throws {
        if Task.isCancelled { throw CancellationError() }
        if _fastPath(tryTakeFreePermit()) { return }
        try await suspend(timeout: timeout, isolation: isolation)
    }

    /// Takes a permit, suspending the calling task until one is free or `deadline` has come on
    /// `clock`.
    ///
    /// As ``wait(timeout:isolation:)``, with a deadline on a clock of the caller's choice: a
    /// `SuspendingClock`, or a manual clock in tests, so that a test of a timeout advances the
    /// clock instead of sleeping.
    ///
    /// - Parameters:
    ///   - deadline: When to give up.
    ///   - clock: The clock `deadline` is on; the wait's timer sleeps on it.
    ///   - isolation: The caller's actor; leave the default.
    /// - Throws: ``TimeoutError`` if no permit came by `deadline`; `CancellationError` if the
    ///   task is cancelled before or while it waits. Either way it holds no permit.
    @inlinable
    public func wait<C: Clock>(
        until deadline: C.Instant, clock: C, isolation: isolated (any Actor)? = #isolation
    ) async throws {
        if Task.isCancelled { throw CancellationError() }
        if _fastPath(tryTakeFreePermit()) { return }
        try await suspend(until: deadline, clock: clock, isolation: isolation)
    }

    /// The slow path of ``wait(timeout:isolation:)``, out of line: the fast path inlined into the
    /// caller carries no clock read and no frame of its own, exactly as the untimed wait's.
    @usableFromInline
    func suspend(timeout: Duration, isolation: isolated (any Actor)?) async throws {
        try await suspend(until: WaitDeadline(timeout: timeout), isolation: isolation)
    }

    /// The slow path of ``wait(until:clock:isolation:)``.
    @usableFromInline
    func suspend<C: Clock>(until deadline: C.Instant, clock: C, isolation: isolated (any Actor)?) async throws {
        try await suspend(until: WaitDeadline(deadline, clock: clock, timeout: nil), isolation: isolation)
    }

    /// The slow path of the timed waits: as ``suspend(isolation:)``, with a timer that withdraws
    /// the waiter when the deadline comes.
    private func suspend(until deadline: WaitDeadline, isolation: isolated (any Actor)?) async throws {
        guard !deadline.hasPassedNow else {
            throw TimeoutError(operation: "AsyncSemaphore.wait", timeout: deadline.timeout)
        }
        let id = lastID.loadThenWrappingIncrement(ordering: .relaxed)
        let timer = deadline.armTimer(owner: self, id: id)
        let (acquired, expired) = await waitForPermit(id: id, timer: timer, isolation: isolation)
        timer.disarm()
        if acquired {
            // A permit handed over as the time ran out is kept; one handed to a task being
            // cancelled is passed on.
            guard Task.isCancelled else { return }
            signal()
            throw CancellationError()
        }
        if Task.isCancelled || !expired { throw CancellationError() }
        throw TimeoutError(operation: "AsyncSemaphore.wait", timeout: deadline.timeout)
    }
}

extension AsyncSemaphore: TimedWaiterOwner {
    func withdrawTimedOut(_ timer: WaitTimer) -> UnsafeContinuation<Void, Never>? {
        withdraw(id: timer.id)
    }
}

// `mutex` guards `machine`; `count` and `lastID` are atomic.
extension AsyncSemaphore: @unchecked Sendable {}
