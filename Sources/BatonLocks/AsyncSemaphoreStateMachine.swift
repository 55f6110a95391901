/// The permits and waiters of an ``AsyncSemaphore``: pure state, changed only under the
/// semaphore's lock. Each transition returns what the caller must do once the lock is released.
struct AsyncSemaphoreStateMachine {
    /// Resumed with `true` when the waiter is handed a permit, `false` when it is cancelled.
    typealias Continuation = UnsafeContinuation<Bool, Never>

    /// Permits free to take. Positive only while no task waits: a signal hands its permit
    /// straight to the first waiter.
    private(set) var permits: Int
    private(set) var waiters = WaiterQueue<Continuation>()
    private var lastID: UInt64 = 0

    init(permits: Int) {
        self.permits = permits
    }

    enum Acquire {
        /// A permit was free and is now the caller's.
        case acquired
        /// None is free: queue under this ID.
        case wait(id: UInt64)
    }

    mutating func acquire() -> Acquire {
        if permits > 0 {
            permits -= 1
            return .acquired
        }
        lastID &+= 1
        return .wait(id: lastID)
    }

    /// Queues a waiter that found no permit, unless the situation changed meanwhile.
    ///
    /// - Parameter cancelled: Whether the waiter's task is cancelled; read under the lock, so a
    ///   cancellation handler that runs later finds the waiter queued.
    /// - Returns: What to resume the continuation with at once, or `nil` if it now waits.
    mutating func enqueue(_ continuation: Continuation, id: UInt64, cancelled: Bool) -> Bool? {
        if permits > 0 {
            // A signal came between `acquire()` and now; no one can be queued ahead.
            permits -= 1
            return true
        }
        if cancelled { return false }
        waiters.append(continuation, id: id)
        return nil
    }

    /// Returns a permit: the first waiter to resume with it, or `nil` if the permit was kept.
    mutating func signal() -> Continuation? {
        if let first = waiters.popFirst() { return first }
        permits += 1
        return nil
    }

    /// Takes a cancelled waiter out; `nil` if it was already handed a permit (or never queued).
    mutating func cancel(id: UInt64) -> Continuation? {
        waiters.remove(id: id)
    }
}
