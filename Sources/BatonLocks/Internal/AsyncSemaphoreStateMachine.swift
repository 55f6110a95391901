import Atomics

/// The waiters of an ``AsyncSemaphore`` and the slow-path transitions of its count: pure state,
/// changed only under the semaphore's mutex. Each transition returns what the caller must do
/// once the mutex is released.
///
/// The count itself is an atomic word outside the mutex, so that a free permit is taken, and a
/// permit nobody waits for is returned, with one atomic operation and no lock. It holds the free
/// permits when positive; when zero or negative, minus the number of tasks registered as waiting.
/// A waiter registers (decrements) and queues in one critical section, so a signal that finds
/// the count negative finds, under the mutex, the waiter it is owed to already queued.
///
/// A signal claims a waiter with its increment and hands it over later, under the mutex, so the
/// queue holds claimed waiters at its front (as many as signals on their way) and unclaimed ones
/// behind them (minus the count, when negative). A cancelled waiter may withdraw only while some
/// registration is unclaimed, and then withdraws one (the increment): had it been claimed, the
/// claim passes to the next waiter, which stays owed the permit. When every queued waiter is
/// claimed it stays queued, is handed its permit, and passes it on. Withdrawing a claimed waiter
/// would leave its signal to pop whoever queued next, a permit made out of nothing.
struct AsyncSemaphoreStateMachine {
    /// Resumed once the waiter's outcome is recorded in `outcomes`.
    typealias Continuation = UnsafeContinuation<Void, Never>

    struct Waiter {
        let continuation: Continuation
        let id: UInt64
    }

    private(set) var waiters = WaiterQueue<Waiter>()
    /// What each resumed waiter was resumed for (`true`: a permit; `false`: cancelled), kept
    /// until the waiter takes it under the mutex. Handing it over through the continuation
    /// instead would pass it by way of the concurrency runtime, whose synchronisation Thread
    /// Sanitizer cannot see when a waiter is resumed before it has finished suspending.
    private var outcomes: [UInt64: Bool] = [:]

    /// Registers a waiter that found no free permit and queues it, unless a permit came free
    /// meanwhile or its task is cancelled.
    ///
    /// - Parameter cancelled: Whether the waiter's task is cancelled; read under the mutex, so a
    ///   cancellation handler that runs later finds the waiter queued.
    /// - Returns: The continuation to resume at once (its outcome recorded), or `nil` if it now
    ///   waits.
    mutating func register(
        _ continuation: Continuation, id: UInt64, cancelled: Bool, count: UnsafeAtomic<Int>
    ) -> Continuation? {
        // Before the count is touched: a registration taken back would be one a signal may
        // already have claimed.
        if cancelled {
            outcomes[id] = false
            return continuation
        }
        // A permit freed since the fast path looked is this waiter's; none is queued ahead,
        // since the count is positive only while no one waits.
        if count.loadThenWrappingDecrement(ordering: .acquiringAndReleasing) > 0 {
            outcomes[id] = true
            return continuation
        }
        waiters.append(Waiter(continuation: continuation, id: id), id: id)
        return nil
    }

    /// Hands the permit to the first waiter, owed it by a signal that found the count negative;
    /// `nil` if it has withdrawn meanwhile.
    mutating func popFirst() -> Continuation? {
        guard let waiter = waiters.popFirst() else { return nil }
        outcomes[waiter.id] = true
        return waiter.continuation
    }

    /// Takes a cancelled waiter out and withdraws an unclaimed registration; `nil` if it was
    /// already handed a permit (or never queued), or if a signal on its way owes every queued
    /// waiter a permit: it then stays queued, and passes its permit on when it gets it.
    mutating func cancel(id: UInt64, count: UnsafeAtomic<Int>) -> Continuation? {
        guard waiters.contains(id: id) else { return nil }
        // Only signals change the count meanwhile, and only upwards.
        var current = count.load(ordering: .acquiring)
        while current < 0 {
            let (exchanged, original) = count.weakCompareExchange(
                expected: current, desired: current + 1, successOrdering: .acquiringAndReleasing,
                failureOrdering: .acquiring)
            if exchanged {
                outcomes[id] = false
                return waiters.remove(id: id)!.continuation
            }
            current = original
        }
        return nil
    }

    /// The outcome a resumed waiter was resumed for: `true` if it holds a permit.
    mutating func takeOutcome(id: UInt64) -> Bool {
        outcomes.removeValue(forKey: id)!
    }
}
