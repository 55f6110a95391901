/// The holder and waiters of an ``AsyncLock``: pure state, changed only under the lock's mutex.
/// Each transition returns what the caller must do once the mutex is released, except priority
/// donation, which must reach the holder while it is certainly alive (see `donate(_:)`).
struct AsyncLockStateMachine {
    /// Resumed once the waiter's outcome is recorded in `outcomes`.
    typealias Continuation = UnsafeContinuation<Void, Never>

    /// A task holding or wanting the lock, and where it asked.
    struct Owner {
        /// The task's handle, as its bits: it identifies the task, and `withTask` turns it back
        /// into a handle while the task is known to be alive (inside `withLock`, which outlives
        /// its stay in this state). Bits, not the handle itself, because copying the handle (a
        /// resilient, reference-counted struct) in and out of this state made the uncontended
        /// `withLock` several times slower.
        let taskBits: UInt
        let file: StaticString
        let line: UInt

        init(task: UnsafeCurrentTask, file: StaticString, line: UInt) {
            taskBits = unsafeBitCast(task, to: UInt.self)
            self.file = file
            self.line = line
        }

        var site: SourceSite { SourceSite(file, line) }

        /// Runs `body` with a handle to the task; only while the task is alive.
        func withTask<Result>(_ body: (UnsafeCurrentTask) -> Result) -> Result {
            withUnsafeTemporaryAllocation(of: UInt.self, capacity: 1) { buffer in
                buffer[0] = taskBits
                // A copy of the handle, retained and released like any copy: balanced.
                return body(UnsafeRawPointer(buffer.baseAddress!).load(as: UnsafeCurrentTask.self))
            }
        }
    }

    private struct Waiter {
        let continuation: Continuation
        let id: UInt64
        let owner: Owner
        let priority: TaskPriority
    }

    private(set) var holder: Owner?
    /// What each resumed waiter was resumed for (`true`: it holds the lock; `false`:
    /// cancelled), kept until the waiter takes it under the mutex. Handing it over through the
    /// continuation instead would pass it by way of the concurrency runtime, whose
    /// synchronisation Thread Sanitizer cannot see when a waiter is resumed before it has
    /// finished suspending.
    private var outcomes: [UInt64: Bool] = [:]
    private var waiters = WaiterQueue<Waiter>()
    /// The holder's priority as last read or raised here, `nil` until a waiter needs it: a
    /// waiter of no higher priority then donates without asking the runtime again.
    private var holderPriority: TaskPriority?
    /// How many queued waiters have each priority: the highest is donated to each new holder.
    private var waitingPriorities = PriorityCounts()
    private var lastID: UInt64 = 0

    var waitingCount: Int { waiters.count }

    enum Acquire {
        /// The lock was free and is now the caller's.
        case acquired
        /// The calling task holds the lock already (taken at this site).
        case reentered(firstTakenAt: SourceSite)
        /// Another task holds it: queue under this ID.
        case wait(id: UInt64)
    }

    /// Takes the lock for `owner` if no task holds it (re-entry and waiting are the slow path's).
    mutating func acquireIfFree(_ owner: Owner) -> Bool {
        guard holder == nil else { return false }
        holder = owner
        holderPriority = nil
        return true
    }

    mutating func acquire(_ owner: Owner) -> Acquire {
        guard let holder else {
            holder = owner
            holderPriority = nil
            return .acquired
        }
        if holder.taskBits == owner.taskBits { return .reentered(firstTakenAt: holder.site) }
        lastID &+= 1
        return .wait(id: lastID)
    }

    /// Queues a waiter that found the lock held, unless the situation changed meanwhile, and
    /// donates its priority to the holder.
    ///
    /// - Parameter cancelled: Whether the waiter's task is cancelled; read under the mutex, so a
    ///   cancellation handler that runs later finds the waiter queued.
    /// - Returns: The continuation to resume at once (its outcome recorded), or `nil` if it now
    ///   waits.
    mutating func enqueue(
        _ continuation: Continuation, owner: Owner, priority: TaskPriority, id: UInt64, cancelled: Bool
    ) -> Continuation? {
        guard holder != nil else {
            // Released between `acquire` and now; a release hands the lock to the first waiter,
            // so no one is queued ahead.
            holder = owner
            holderPriority = priority
            outcomes[id] = true
            return continuation
        }
        if cancelled {
            outcomes[id] = false
            return continuation
        }
        waiters.append(Waiter(continuation: continuation, id: id, owner: owner, priority: priority), id: id)
        waitingPriorities.add(priority)
        donate(priority)
        return nil
    }

    /// Releases the lock: hands it to the first waiter and returns its continuation, or frees it.
    mutating func release() -> Continuation? {
        guard let next = waiters.popFirst() else {
            holder = nil
            return nil
        }
        waitingPriorities.remove(next.priority)
        holder = next.owner
        holderPriority = next.priority
        if let highest = waitingPriorities.highest { donate(highest) }
        outcomes[next.id] = true
        return next.continuation
    }

    /// Takes a cancelled waiter out; `nil` if it was already handed the lock (or never queued).
    mutating func cancel(id: UInt64) -> Continuation? {
        guard let waiter = waiters.remove(id: id) else { return nil }
        waitingPriorities.remove(waiter.priority)
        outcomes[id] = false
        return waiter.continuation
    }

    /// The outcome a resumed waiter was resumed for: `true` if it holds the lock.
    mutating func takeOutcome(id: UInt64) -> Bool {
        outcomes.removeValue(forKey: id)!
    }

    /// Raises the holder's task to `priority`, so that a low-priority holder that a
    /// high-priority task waits for is not starved by medium-priority work. Done under the
    /// mutex: the holder is alive while it is the holder, and only then.
    private mutating func donate(_ priority: TaskPriority) {
        if let known = holderPriority, known >= priority { return }
        guard let holder else { return }
        holderPriority = holder.withTask { task in
            let current = task.priority
            guard current < priority else { return current }
            escalate(task, to: priority)
            return priority
        }
    }
}

/// How many waiters have each priority: a handful of distinct priorities at most, so a short
/// sorted array.
struct PriorityCounts {
    private var counts: [(priority: TaskPriority, count: Int)] = []

    var highest: TaskPriority? { counts.last?.priority }

    mutating func add(_ priority: TaskPriority) {
        if let index = counts.firstIndex(where: { $0.priority >= priority }) {
            if counts[index].priority == priority {
                counts[index].count += 1
            } else {
                counts.insert((priority, 1), at: index)
            }
        } else {
            counts.append((priority, 1))
        }
    }

    mutating func remove(_ priority: TaskPriority) {
        guard let index = counts.firstIndex(where: { $0.priority == priority }) else { return }
        counts[index].count -= 1
        if counts[index].count == 0 { counts.remove(at: index) }
    }
}

/// Raises `task`'s priority to at least `priority`, where the runtime can (Swift 6.2's
/// `UnsafeCurrentTask.escalatePriority(to:)`); on older Apple releases, and with a compiler
/// older than 6.2, it does nothing.
func escalate(_ task: UnsafeCurrentTask, to priority: TaskPriority) {
    #if compiler(>=6.2)
    if #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) {
        task.escalatePriority(to: priority)
    }
    #endif
}
