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

    /// Resumed once the waiter's outcome is recorded in `outcomes`.
    typealias Continuation = UnsafeContinuation<Void, Never>

    private struct Waiter {
        let continuation: Continuation
        let id: UInt64
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
    /// What each resumed waiter was resumed with, kept until the waiter takes it under the mutex.
    /// Handing it over through the continuation instead would pass it by way of the concurrency
    /// runtime, whose synchronisation Thread Sanitizer cannot see when a waiter is resumed before
    /// it has finished suspending.
    private var outcomes: [UInt64: Outcome] = [:]
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
    /// - Returns: The continuation to resume at once (its outcome recorded), or `nil` if it now
    ///   waits.
    mutating func enqueue(
        _ continuation: Continuation, task: UnsafeCurrentTask, priority: TaskPriority, id: UInt64,
        cancelled: Bool, value: () -> Value
    ) -> Continuation? {
        switch state {
        case .done:
            outcomes[id] = .value(value())
            return continuation
        case .idle:
            state = .running(leader: task)
            outcomes[id] = .lead
            return continuation
        case .running(let leader):
            if cancelled {
                outcomes[id] = .cancelled
                return continuation
            }
            waiters.append(Waiter(continuation: continuation, id: id, task: task, priority: priority), id: id)
            // Under the mutex, so the leader is still running the initializer, hence alive.
            if leader.priority < priority { escalate(leader, to: priority) }
            return nil
        }
    }

    /// The initializer returned `value`: every waiter gets it.
    mutating func succeed(_ value: Value) -> [Continuation] {
        state = .done
        return drain(with: .value(value))
    }

    /// The initializer threw `error`. If the leader was cancelled, the first waiter runs it again
    /// and the others keep waiting; otherwise every waiter gets the error and the next read
    /// retries.
    ///
    /// - Returns: The continuations to resume.
    mutating func fail(_ error: any Error, leaderCancelled: Bool) -> [Continuation] {
        guard leaderCancelled else {
            state = .idle
            return drain(with: .failure(error))
        }
        guard let next = waiters.popFirst() else {
            state = .idle
            return []
        }
        state = .running(leader: next.task)
        outcomes[next.id] = .lead
        return [next.continuation]
    }

    /// Takes a cancelled waiter out; `nil` if it was already resumed (or never queued).
    mutating func cancel(id: UInt64) -> Continuation? {
        guard let waiter = waiters.remove(id: id) else { return nil }
        outcomes[id] = .cancelled
        return waiter.continuation
    }

    /// The outcome a resumed waiter was resumed with.
    mutating func takeOutcome(id: UInt64) -> Outcome {
        outcomes.removeValue(forKey: id)!
    }

    private mutating func drain(with outcome: Outcome) -> [Continuation] {
        var continuations: [Continuation] = []
        continuations.reserveCapacity(waiters.count)
        while let waiter = waiters.popFirst() {
            outcomes[waiter.id] = outcome
            continuations.append(waiter.continuation)
        }
        return continuations
    }
}
