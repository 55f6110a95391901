/// The holder and waiters of an ``AsyncLock``: pure state, changed only under the lock's mutex.
/// Each transition returns what the caller must do: resume a waiter once the mutex is released,
/// or donate a priority to the holder, which the caller does before it releases the mutex, while
/// the holder is certainly alive.
struct AsyncLockStateMachine {
    typealias Continuation = UnsafeContinuation<Void, Never>

    /// A task holding or wanting the lock, and where it asked.
    struct Owner {
        /// The task's handle, as its bits: it identifies the task, and `AsyncLock` turns it back
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
    }

    /// A priority to donate, or a waiter's. Raw, so that what holds one has a fixed layout:
    /// `TaskPriority` is resilient, and an action or a queued waiter holding one goes through
    /// runtime metadata and value witnesses, which the uncontended release would pay for.
    struct Priority {
        let rawValue: UInt8

        init(_ priority: TaskPriority) {
            rawValue = priority.rawValue
        }

        var taskPriority: TaskPriority { TaskPriority(rawValue: rawValue) }
    }

    /// What the machine keeps about a queued waiter.
    private struct Waiting {
        let owner: Owner
        let priority: Priority
    }

    private(set) var holder: Owner?
    /// The tasks waiting for the lock, and what each resumed one was resumed for (`true`: it
    /// holds the lock; `false`: cancelled).
    private var waiters = Waiters<Bool, Waiting>()
    /// The holder's priority as last read or raised by a donation, `nil` until a waiter needs
    /// it: a waiter of no higher priority then donates without asking the runtime again.
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

    enum Enqueue {
        /// Resume the waiter at once (its outcome recorded): it holds the lock, or its task is
        /// cancelled.
        case resumeNow(Continuation)
        /// It waits. With a priority, the caller raises the holder's task to it before it
        /// releases the mutex (the holder is alive while it holds the lock, and only then), and
        /// reports the holder's priority with `donated(holderPriority:)`.
        case wait(donating: Priority?)
    }

    /// Queues a waiter that found the lock held, unless the situation changed meanwhile; its
    /// priority is to be donated to the holder.
    ///
    /// - Parameter cancelled: Whether the waiter's task is cancelled; read under the mutex, so a
    ///   cancellation handler that runs later finds the waiter queued.
    mutating func enqueue(
        _ continuation: Continuation, owner: Owner, priority: TaskPriority, id: UInt64, cancelled: Bool
    ) -> Enqueue {
        guard holder != nil else {
            // Released between `acquire` and now; a release hands the lock to the first waiter,
            // so no one is queued ahead.
            holder = owner
            holderPriority = priority
            return .resumeNow(waiters.resolve(continuation, id: id, with: true))
        }
        if cancelled { return .resumeNow(waiters.resolve(continuation, id: id, with: false)) }
        waiters.append(continuation, id: id, Waiting(owner: owner, priority: Priority(priority)))
        waitingPriorities.add(priority)
        return .wait(donating: donation(priority))
    }

    enum Release {
        /// No task waits: the lock is free.
        case free
        /// The lock is handed to the waiter of this continuation, to resume after the mutex is
        /// released. With a priority (a waiter behind it has a higher one), the caller first
        /// raises the new holder's task to it, as for `Enqueue.wait(donating:)`.
        case handOver(Continuation, donating: Priority?)
    }

    /// Releases the lock: hands it to the first waiter, or frees it.
    mutating func release() -> Release {
        guard let next = waiters.removeFirst(with: true) else {
            holder = nil
            return .free
        }
        waitingPriorities.remove(next.info.priority.taskPriority)
        holder = next.info.owner
        holderPriority = next.info.priority.taskPriority
        return .handOver(next.continuation, donating: waitingPriorities.highest.flatMap(donation))
    }

    /// Takes a cancelled waiter out; `nil` if it was already handed the lock (or never queued).
    ///
    /// - Returns: The continuation to resume (its outcome recorded).
    mutating func cancel(id: UInt64) -> Continuation? {
        guard let waiter = waiters.remove(id: id, with: false) else { return nil }
        waitingPriorities.remove(waiter.info.priority.taskPriority)
        return waiter.continuation
    }

    /// The outcome a resumed waiter was resumed for: `true` if it holds the lock.
    mutating func takeOutcome(id: UInt64) -> Bool {
        waiters.takeOutcome(id: id)
    }

    /// The holder's task now runs at `priority`, as the caller read or raised it for a donation.
    mutating func donated(holderPriority priority: TaskPriority) {
        holderPriority = priority
    }

    /// The priority a waiter of `priority` is to donate to the holder: `nil` if the holder is
    /// known to run at least that high. Donating raises a low-priority holder that a
    /// high-priority task waits for, so that medium-priority work does not starve it.
    private func donation(_ priority: TaskPriority) -> Priority? {
        if let known = holderPriority, known >= priority { return nil }
        guard holder != nil else { return nil }
        return Priority(priority)
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
