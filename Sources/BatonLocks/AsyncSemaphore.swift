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
        let acquired = await suspendAsWaiter(isolation: isolation) { continuation in
            switch machine.register(continuation, id: id, cancelled: Task.isCancelled) {
            case .resumeNow(let now):
                return now
            case .decrementCount:
                let permitFree = count.loadThenWrappingDecrement(ordering: .acquiringAndReleasing) > 0
                return machine.registered(continuation, id: id, permitFree: permitFree)
            }
        } cancel: {
            switch machine.cancel(id: id) {
            case .notQueued: nil
            case .withdrawRegistration: withdrawRegistration() ? machine.withdrawn(id: id) : nil
            }
        } takeOutcome: {
            machine.takeOutcome(id: id)
        }
        guard acquired else { throw CancellationError() }
        if Task.isCancelled {
            // Handed a permit as the task was being cancelled: pass it on rather than run a
            // cancelled task's work under it.
            signal()
            throw CancellationError()
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

extension AsyncSemaphore: WaiterOwner {}

// `mutex` guards `machine`; `count` and `lastID` are atomic.
extension AsyncSemaphore: @unchecked Sendable {}
