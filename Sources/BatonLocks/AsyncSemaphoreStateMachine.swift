import Atomics

/// The waiters of an ``AsyncSemaphore`` and the slow-path transitions of its count: pure state,
/// changed only under the semaphore's mutex. Each transition returns what the caller must do
/// once the mutex is released.
///
/// The count itself is an atomic word outside the mutex, so that a free permit is taken, and a
/// permit nobody waits for is returned, with one atomic operation and no lock. It holds the free
/// permits when positive; when zero or negative, minus the number of tasks registered as waiting.
/// A waiter registers (decrements) and queues in one critical section, so a signal that finds
/// the count negative finds, under the mutex, the waiter it is owed to already queued, or gone
/// because it withdrew its registration (cancelled) — and then the withdrawal has turned that
/// signal's permit into a free one.
struct AsyncSemaphoreStateMachine {
    /// Resumed with `true` when the waiter is handed a permit, `false` when it is cancelled.
    typealias Continuation = UnsafeContinuation<Bool, Never>

    private(set) var waiters = WaiterQueue<Continuation>()

    /// Registers a waiter that found no free permit and queues it, unless a permit came free
    /// meanwhile or its task is cancelled.
    ///
    /// - Parameter cancelled: Whether the waiter's task is cancelled; read under the mutex, so a
    ///   cancellation handler that runs later finds the waiter queued.
    /// - Returns: What to resume the continuation with at once, or `nil` if it now waits.
    mutating func register(
        _ continuation: Continuation, id: UInt64, cancelled: Bool, count: UnsafeAtomic<Int>
    ) -> Bool? {
        // A permit freed since the fast path looked is this waiter's; none is queued ahead,
        // since the count is positive only while no one waits.
        if count.loadThenWrappingDecrement(ordering: .acquiringAndReleasing) > 0 { return true }
        if cancelled {
            count.wrappingIncrement(ordering: .acquiringAndReleasing)
            return false
        }
        waiters.append(continuation, id: id)
        return nil
    }

    /// Takes the first waiter, owed a permit by a signal that found the count negative; `nil` if
    /// it has withdrawn meanwhile.
    mutating func popFirst() -> Continuation? {
        waiters.popFirst()
    }

    /// Takes a cancelled waiter out and withdraws its registration; `nil` if it was already
    /// handed a permit (or never queued).
    mutating func cancel(id: UInt64, count: UnsafeAtomic<Int>) -> Continuation? {
        guard let waiter = waiters.remove(id: id) else { return nil }
        count.wrappingIncrement(ordering: .acquiringAndReleasing)
        return waiter
    }
}
