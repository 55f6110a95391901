/// The suspended tasks of an async primitive, and what each was resumed for: the queue
/// ``AsyncSemaphore`` and ``AsyncLazy`` wait in (``AsyncLock`` keeps a list of its own waiters;
/// see `AsyncLockWaiter`).
///
/// A waiter queues under an ID its task chose before it suspended, so that its cancellation
/// handler can take it out again. Whoever takes a waiter out records its outcome here and gets
/// its continuation back to resume; the resumed task then takes the outcome, under the
/// primitive's lock. Handing the outcome over through the continuation instead would pass it by
/// way of the concurrency runtime, whose synchronisation Thread Sanitizer cannot see when a
/// waiter is resumed before it has finished suspending.
///
/// Pure state, not thread-safe: it lives inside a primitive's state machine, under that
/// primitive's lock. It resumes no continuation; the primitive does, in
/// `WaiterOwner.suspendAsWaiter` and its own transitions' actions.
struct Waiters<Outcome, Info> {
    /// Resumed once the waiter's outcome is recorded.
    typealias Continuation = UnsafeContinuation<Void, Never>

    /// A queued waiter.
    struct Waiter {
        let continuation: Continuation
        let id: UInt64
        /// What the state machine keeps about the waiter (its task, its priority).
        let info: Info
    }

    private var queue = WaiterQueue<Waiter>()
    /// The outcome of each resumed waiter, until it takes it: the first few in a small array,
    /// searched without hashing (a waiter usually takes its outcome before the next is resumed),
    /// the rest (when many are resumed at once) in `moreOutcomes`.
    private var outcomes: [(id: UInt64, outcome: Outcome)] = []
    private var moreOutcomes: [UInt64: Outcome] = [:]
    /// How many outcomes `outcomes` holds at most.
    private static var inlineOutcomes: Int { 8 }

    /// The waiters still queued.
    var count: Int { queue.count }

    /// Whether the waiter with this ID is still queued.
    func contains(id: UInt64) -> Bool {
        queue.contains(id: id)
    }

    /// Queues a waiter at the back.
    mutating func append(_ continuation: Continuation, id: UInt64, _ info: Info) {
        queue.append(Waiter(continuation: continuation, id: id, info: info), id: id)
    }

    /// Records `outcome` for a waiter that is not queued (it is to be resumed as soon as it
    /// suspends) and returns its continuation.
    mutating func resolve(_ continuation: Continuation, id: UInt64, with outcome: Outcome) -> Continuation {
        record(outcome, id: id)
        return continuation
    }

    /// Takes the waiter that arrived first out, with `outcome`; `nil` if none is queued.
    mutating func removeFirst(with outcome: Outcome) -> Waiter? {
        guard let waiter = queue.popFirst() else { return nil }
        record(outcome, id: waiter.id)
        return waiter
    }

    /// Takes the waiter with this ID out, with `outcome`; `nil` if it is no longer queued.
    mutating func remove(id: UInt64, with outcome: Outcome) -> Waiter? {
        guard let waiter = queue.remove(id: id) else { return nil }
        record(outcome, id: id)
        return waiter
    }

    /// Takes every waiter out, in arrival order, with `outcome`, and returns their continuations.
    mutating func removeAll(with outcome: Outcome) -> [Continuation] {
        var continuations: [Continuation] = []
        continuations.reserveCapacity(queue.count)
        while let waiter = removeFirst(with: outcome) {
            continuations.append(waiter.continuation)
        }
        return continuations
    }

    /// The outcome a resumed waiter was resumed for; it must have been recorded.
    mutating func takeOutcome(id: UInt64) -> Outcome {
        if let index = outcomes.firstIndex(where: { $0.id == id }) {
            return outcomes.swapRemove(at: index).outcome
        }
        return moreOutcomes.removeValue(forKey: id)!
    }

    private mutating func record(_ outcome: Outcome, id: UInt64) {
        if outcomes.count < Self.inlineOutcomes {
            outcomes.append((id, outcome))
        } else {
            moreOutcomes[id] = outcome
        }
    }
}

/// A primitive whose waiters suspend under its `mutex`: the owner of a state machine that keeps
/// ``Waiters``.
protocol WaiterOwner: AnyObject, Sendable {
    /// Guards the primitive's state machine.
    var mutex: PlatformMutex { get }
}

extension WaiterOwner {
    /// Suspends the calling task as a waiter and returns what it was resumed for.
    ///
    /// Each closure runs under ``mutex``, and the continuation it returns, if any, is resumed
    /// after the mutex is released.
    ///
    /// - Parameters:
    ///   - isolation: The caller's actor, on which the task suspends.
    ///   - enqueue: Queues the waiter with its continuation; returns the continuation back if
    ///     the waiter is not to wait (its outcome recorded), `nil` if it queued. Runs once the
    ///     task has begun to suspend.
    ///   - cancel: Runs if the task is cancelled (before, during or after `enqueue`); returns the
    ///     continuation of the waiter it took out (its outcome recorded), or `nil`.
    ///   - takeOutcome: Takes the outcome recorded for the waiter, once it is resumed.
    func suspendAsWaiter<Outcome>(
        isolation: isolated (any Actor)?,
        enqueue: (UnsafeContinuation<Void, Never>) -> UnsafeContinuation<Void, Never>?,
        cancel: @Sendable () -> UnsafeContinuation<Void, Never>?,
        takeOutcome: () -> Outcome
    ) async -> Outcome {
        await withTaskCancellationHandler {
            await withUnsafeContinuation(isolation: isolation) { continuation in
                mutex.lock()
                let now = enqueue(continuation)
                mutex.unlock()
                now?.resume()
            }
        } onCancel: {
            mutex.lock()
            let waiter = cancel()
            mutex.unlock()
            waiter?.resume()
        }
        mutex.lock()
        defer { mutex.unlock() }
        return takeOutcome()
    }
}

extension Array {
    /// Removes the element at `index` by moving the last one into its place: O(1), order not kept.
    fileprivate mutating func swapRemove(at index: Int) -> Element {
        swapAt(index, count - 1)
        return removeLast()
    }
}
