/// The waiters of an ``AsyncSemaphore`` and the slow-path transitions of its count: pure state,
/// changed only under the semaphore's mutex. Each transition returns what the caller must do
/// once the mutex is released; the count's atomic operations are the semaphore's, and their
/// results come in here as arguments.
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
    typealias Continuation = UnsafeContinuation<Void, Never>

    /// The tasks waiting, and what each resumed one was resumed for (`true`: a permit; `false`:
    /// cancelled).
    private var waiters = Waiters<Bool, Void>()

    var waitingCount: Int { waiters.count }

    /// What a waiter that found no free permit does.
    enum Register {
        /// Its task is cancelled: resume it at once (its outcome recorded). It takes nothing, and
        /// the count stays as it is: a registration taken back would be one a signal may
        /// already have claimed.
        case resumeNow(Continuation)
        /// It registers: the caller decrements the count, then reports with
        /// `registered(_:id:permitFree:)`.
        case decrementCount
    }

    /// A waiter that found no free permit is about to register.
    ///
    /// - Parameter cancelled: Whether the waiter's task is cancelled; read under the mutex, so a
    ///   cancellation handler that runs later finds the waiter queued.
    mutating func register(_ continuation: Continuation, id: UInt64, cancelled: Bool) -> Register {
        cancelled ? .resumeNow(waiters.resolve(continuation, id: id, with: false)) : .decrementCount
    }

    /// A waiter has registered (decremented the count) and queues, unless a permit came free
    /// meanwhile.
    ///
    /// - Parameter permitFree: Whether the count was positive before the decrement: a permit
    ///   freed since the fast path looked is this waiter's; none is queued ahead, since the count
    ///   is positive only while no one waits.
    /// - Returns: The continuation to resume at once (its outcome recorded), or `nil` if it now
    ///   waits.
    mutating func registered(_ continuation: Continuation, id: UInt64, permitFree: Bool) -> Continuation? {
        if permitFree { return waiters.resolve(continuation, id: id, with: true) }
        waiters.append(continuation, id: id, ())
        return nil
    }

    /// Hands the permit to the first waiter, owed it by a signal that found the count negative;
    /// `nil` if it has withdrawn meanwhile.
    mutating func popFirst() -> Continuation? {
        waiters.removeFirst(with: true)?.continuation
    }

    /// What a cancelled waiter does.
    enum Cancel {
        /// It was already handed a permit (or never queued): nothing to do.
        case notQueued
        /// It is queued: the caller withdraws an unclaimed registration from the count, if there
        /// is one, and if so reports with `withdrawn(id:)`. If none is unclaimed, a signal on its
        /// way owes every queued waiter a permit: it then stays queued, and passes its permit on
        /// when it gets it.
        case withdrawRegistration
    }

    /// The task of the waiter with this ID is cancelled.
    func cancel(id: UInt64) -> Cancel {
        waiters.contains(id: id) ? .withdrawRegistration : .notQueued
    }

    /// A cancelled waiter's registration is withdrawn: takes it out and returns its continuation
    /// to resume (its outcome recorded).
    mutating func withdrawn(id: UInt64) -> Continuation {
        waiters.remove(id: id, with: false)!.continuation
    }

    /// The outcome a resumed waiter was resumed for: `true` if it holds a permit.
    mutating func takeOutcome(id: UInt64) -> Bool {
        waiters.takeOutcome(id: id)
    }
}
