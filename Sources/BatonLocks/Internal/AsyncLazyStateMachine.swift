/// The single-flight initialisation of an ``AsyncLazy``: who runs the initializer and who waits
/// for it. Pure state, changed only under the lazy value's mutex. Each transition returns what
/// the caller must do: resume waiters once the mutex is released, or donate a waiter's priority
/// to the task running the initializer, which the caller does before it releases the mutex,
/// while that task is certainly alive.
struct AsyncLazyStateMachine<Value: Sendable> {
    /// What a waiter is resumed with.
    enum Outcome {
        /// The initializer succeeded.
        case value(Value)
        /// The attempt it waited for failed with this error.
        case failure(any Error)
        /// The task running the initializer was cancelled: this waiter runs it now.
        case lead
        /// The waiter itself was cancelled.
        case cancelled
    }

    typealias Continuation = UnsafeContinuation<Void, Never>

    private enum State {
        case idle
        /// `leader` runs the initializer; valid until it reports the outcome.
        case running(leader: UnsafeCurrentTask)
        /// The initializer returned this value.
        case done(Value)
    }

    private var state = State.idle
    /// The readers waiting for the attempt in progress, each with its task (valid while it waits
    /// or leads, which outlasts its stay here), and what each resumed one was resumed with.
    private var waiters = Waiters<Outcome, UnsafeCurrentTask>()
    private var lastID: UInt64 = 0

    var waitingCount: Int { waiters.count }

    enum Read {
        /// The value is there.
        case done(Value)
        /// No one runs the initializer: the caller does.
        case lead
        /// Another task runs it: queue under this ID.
        case wait(id: UInt64)
        /// The caller is the task running the initializer.
        case reentered
    }

    mutating func read(_ task: UnsafeCurrentTask) -> Read {
        switch state {
        case .done(let value):
            return .done(value)
        case .idle:
            state = .running(leader: task)
            return .lead
        case .running(let leader):
            if leader == task { return .reentered }
            lastID &+= 1
            return .wait(id: lastID)
        }
    }

    enum Enqueue {
        /// Resume the waiter at once (its outcome recorded): the attempt ended meanwhile, or its
        /// task is cancelled.
        case resumeNow(Continuation)
        /// It waits. The caller donates the waiter's priority to `leader`, the task running the
        /// initializer, before it releases the mutex (the leader is alive until it reports the
        /// outcome, which takes the mutex).
        case wait(donatingTo: UnsafeCurrentTask)
    }

    /// Queues a waiter, unless the attempt ended meanwhile.
    ///
    /// - Parameter cancelled: Whether the waiter's task is cancelled; read under the mutex, so a
    ///   cancellation handler that runs later finds the waiter queued.
    mutating func enqueue(
        _ continuation: Continuation, task: UnsafeCurrentTask, id: UInt64, cancelled: Bool
    ) -> Enqueue {
        switch state {
        case .done(let value):
            return .resumeNow(waiters.resolve(continuation, id: id, with: .value(value)))
        case .idle:
            state = .running(leader: task)
            return .resumeNow(waiters.resolve(continuation, id: id, with: .lead))
        case .running(let leader):
            if cancelled { return .resumeNow(waiters.resolve(continuation, id: id, with: .cancelled)) }
            waiters.append(continuation, id: id, task)
            return .wait(donatingTo: leader)
        }
    }

    /// The initializer returned `value`: every waiter gets it.
    ///
    /// - Returns: The continuations to resume.
    mutating func succeed(_ value: Value) -> [Continuation] {
        state = .done(value)
        return waiters.removeAll(with: .value(value))
    }

    /// The initializer threw `error`. If the leader was cancelled, the first waiter runs it again
    /// and the others keep waiting; otherwise every waiter gets the error and the next read
    /// retries.
    ///
    /// - Returns: The continuations to resume.
    mutating func fail(_ error: any Error, leaderCancelled: Bool) -> [Continuation] {
        guard leaderCancelled else {
            state = .idle
            return waiters.removeAll(with: .failure(error))
        }
        guard let next = waiters.removeFirst(with: .lead) else {
            state = .idle
            return []
        }
        state = .running(leader: next.info)
        return [next.continuation]
    }

    /// Takes a cancelled waiter out; `nil` if it was already resumed (or never queued).
    ///
    /// - Returns: The continuation to resume (its outcome recorded).
    mutating func cancel(id: UInt64) -> Continuation? {
        waiters.remove(id: id, with: .cancelled)?.continuation
    }

    /// The outcome a resumed waiter was resumed with.
    mutating func takeOutcome(id: UInt64) -> Outcome {
        waiters.takeOutcome(id: id)
    }
}
