/// The single-flight initialisation of an ``AsyncLazy``: who runs the initializer and who waits
/// for it. Pure state, changed only under the lazy value's mutex; each transition returns the
/// continuations to resume once the mutex is released.
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

    typealias Continuation = UnsafeContinuation<Outcome, Never>

    private struct Waiter {
        let continuation: Continuation
        /// Valid while the task waits or leads, which outlasts its stay in this state.
        let task: UnsafeCurrentTask
        let priority: TaskPriority
    }

    private enum State {
        case idle
        /// `leader` runs the initializer; valid until it reports the outcome.
        case running(leader: UnsafeCurrentTask)
        case done
    }

    private var state = State.idle
    private var waiters = WaiterQueue<Waiter>()
    private var lastID: UInt64 = 0

    var waitingCount: Int { waiters.count }

    enum Read {
        /// The value is there: read it.
        case done
        /// No one runs the initializer: the caller does.
        case lead
        /// Another task runs it: queue under this ID.
        case wait(id: UInt64)
        /// The caller is the task running the initializer.
        case reentered
    }

    mutating func read(_ task: UnsafeCurrentTask) -> Read {
        switch state {
        case .done:
            return .done
        case .idle:
            state = .running(leader: task)
            return .lead
        case .running(let leader):
            if leader == task { return .reentered }
            lastID &+= 1
            return .wait(id: lastID)
        }
    }

    /// Queues a waiter, unless the attempt ended meanwhile, and donates its priority to the
    /// task running the initializer.
    ///
    /// - Returns: What to resume the continuation with at once, or `nil` if it now waits.
    mutating func enqueue(
        _ continuation: Continuation, task: UnsafeCurrentTask, priority: TaskPriority, id: UInt64,
        cancelled: Bool, value: () -> Value
    ) -> Outcome? {
        switch state {
        case .done:
            return .value(value())
        case .idle:
            state = .running(leader: task)
            return .lead
        case .running(let leader):
            if cancelled { return .cancelled }
            waiters.append(Waiter(continuation: continuation, task: task, priority: priority), id: id)
            // Under the mutex, so the leader is still running the initializer, hence alive.
            if leader.priority < priority { escalate(leader, to: priority) }
            return nil
        }
    }

    /// The initializer returned: every waiter gets the value.
    mutating func succeed() -> [Continuation] {
        state = .done
        return drain()
    }

    /// The initializer threw. If the leader was cancelled, the first waiter runs it again and
    /// the others keep waiting; otherwise every waiter gets the error and the next read retries.
    ///
    /// - Returns: The continuations to resume, and with what.
    mutating func fail(leaderCancelled: Bool) -> (continuations: [Continuation], lead: Bool) {
        guard leaderCancelled else {
            state = .idle
            return (drain(), false)
        }
        guard let next = waiters.popFirst() else {
            state = .idle
            return ([], false)
        }
        state = .running(leader: next.task)
        return ([next.continuation], true)
    }

    /// Takes a cancelled waiter out; `nil` if it was already resumed (or never queued).
    mutating func cancel(id: UInt64) -> Continuation? {
        waiters.remove(id: id)?.continuation
    }

    private mutating func drain() -> [Continuation] {
        var continuations: [Continuation] = []
        continuations.reserveCapacity(waiters.count)
        while let waiter = waiters.popFirst() { continuations.append(waiter.continuation) }
        return continuations
    }
}
