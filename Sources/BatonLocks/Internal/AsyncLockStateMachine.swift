import Atomics

/// The word that says who holds an ``AsyncLock``: `0` when the lock is free, otherwise the
/// holding task's handle bits, with ``waitersBit`` set while a task waits.
///
/// A free lock is taken, and a lock no task waits for is released, with one compare-and-swap on
/// the word and no mutex. Everything else happens under the lock's mutex: a task queues only
/// after it has set ``waitersBit`` there, and a holder whose word carries the bit releases
/// through the mutex. So while a task holding the mutex has seen the bit set, the holder cannot
/// let go of the lock: it is alive, and it can be asked its priority and raised.
@usableFromInline
struct AsyncLockWord {
    /// A task's handle is the address of an aligned object, so its low bit is free.
    @usableFromInline static let waitersBit: UInt = 1

    @usableFromInline let atomic: UnsafeAtomic<UInt>

    init() {
        atomic = .create(0)
    }

    func destroy() {
        atomic.destroy()
    }

    /// The holding task's handle bits, `0` if the lock is free.
    var holder: UInt { atomic.load(ordering: .acquiring) & ~Self.waitersBit }

    /// Takes the lock for the task with these handle bits if it is free.
    @inlinable
    func tryTake(_ taskBits: UInt) -> Bool {
        atomic.compareExchange(
            expected: 0, desired: taskBits, successOrdering: .acquiring, failureOrdering: .relaxed
        ).exchanged
    }

    /// Frees the lock if no task waits; called by the holder only, so the word holds the caller's
    /// own bits, with or without ``waitersBit``.
    @inlinable
    func tryFree() -> Bool {
        let held = atomic.load(ordering: .relaxed)
        return held & Self.waitersBit == 0
            && atomic.compareExchange(
                expected: held, desired: 0, successOrdering: .releasing, failureOrdering: .relaxed
            ).exchanged
    }
}

/// The holder and waiters of an ``AsyncLock``: state changed only under the lock's mutex, with
/// the word the fast paths take and release the lock with (see ``AsyncLockWord``). Each
/// transition returns what the caller must do: resume a waiter once the mutex is released, or
/// donate a priority to the holder, which the caller does before it releases the mutex, while
/// the holder is certainly alive.
struct AsyncLockStateMachine {
    typealias Continuation = UnsafeContinuation<Void, Never>

    /// A task holding or wanting the lock.
    struct Owner {
        /// The task's handle, as its bits: it identifies the task, and `AsyncLock` turns it back
        /// into a handle while the task is known to be alive (inside `withLock`, which outlives
        /// its stay in this state). Bits, not the handle itself, because copying the handle (a
        /// resilient, reference-counted struct) in and out of this state made the uncontended
        /// `withLock` several times slower.
        let taskBits: UInt

        /// The task at this address (`swift_task_getCurrent()`'s answer).
        init(task: UnsafeMutableRawPointer) {
            taskBits = UInt(bitPattern: task)
        }

        /// The task's pointer, for the runtime's calls.
        var task: UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: taskBits)! }
    }

    /// A priority to donate, or a waiter's. Raw, so that what holds one has a fixed layout:
    /// `TaskPriority` is resilient, and an action or a queued waiter holding one goes through
    /// runtime metadata and value witnesses, which the uncontended release would pay for.
    struct Priority {
        let rawValue: UInt8

        init(_ priority: TaskPriority) {
            rawValue = priority.rawValue
        }

        init(rawValue: UInt8) {
            self.rawValue = rawValue
        }

        var taskPriority: TaskPriority { TaskPriority(rawValue: rawValue) }
    }

    /// Who holds the lock. The fast paths change it without the mutex, but only from free to
    /// held and, without ``AsyncLockWord/waitersBit``, back.
    let word: AsyncLockWord
    /// The tasks waiting for the lock, first to arrive first: a list through the waiters
    /// themselves, so that queuing, handing over and taking a cancelled waiter out each change
    /// a few references and look nothing up.
    private var first: AsyncLockWaiter?
    /// The last waiter in the list: its predecessor's `next` (or `first`) keeps it.
    private unowned(unsafe) var last: AsyncLockWaiter?
    private(set) var waitingCount = 0
    /// The holder's priority as last read or raised by a donation, `nil` until a waiter needs
    /// it: a waiter of no higher priority then donates without asking the runtime again. Kept
    /// only while the word carries ``AsyncLockWord/waitersBit`` (the holder can change without
    /// the mutex otherwise), `nil` the rest of the time.
    private var holderPriority: Priority?
    /// How many queued waiters have each priority: the highest is donated to each new holder.
    private var waitingPriorities = PriorityCounts()

    init(word: AsyncLockWord) {
        self.word = word
    }

    enum Acquire {
        /// The lock was free and is now the caller's.
        case acquired
        /// The calling task holds the lock already.
        case reentered
        /// Another task holds it: queue.
        case wait
    }

    /// Takes the lock if it is free, or says why not. Needs no mutex: it reads and changes only
    /// the word, as the fast path does. The re-entry check is exact without one: if the word
    /// names the calling task, only that task can change it; if it does not, it cannot come to
    /// name it meanwhile (the lock is handed only to queued waiters, and the caller is not one).
    /// `holderPriority` needs no reset: it is `nil` whenever the word is free.
    static func acquire(_ owner: Owner, word: AsyncLockWord) -> Acquire {
        while true {
            let holder = word.holder
            if holder == 0 {
                // A fast path may take it first; then look again.
                guard word.tryTake(owner.taskBits) else { continue }
                return .acquired
            }
            return holder == owner.taskBits ? .reentered : .wait
        }
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
    /// A waiter withdrawn before it queued (its task was cancelled, or its time ran out, between
    /// `acquire` and now: its cancellation handler or timer found it arriving) is resumed at once
    /// and does not queue.
    mutating func enqueue(_ waiter: AsyncLockWaiter, _ continuation: Continuation) -> Enqueue {
        if waiter.stage == .withdrawn { return .resumeNow(continuation) }
        var held = word.atomic.load(ordering: .acquiring)
        while true {
            if held == 0 {
                // Released between `acquire` and now; a release hands the lock to the first
                // waiter, so no one is queued ahead.
                if word.tryTake(waiter.owner.taskBits) {
                    holderPriority = nil
                    waiter.stage = .handedOver
                    return .resumeNow(continuation)
                }
            } else if held & AsyncLockWord.waitersBit != 0 {
                break
            } else {
                // From now on the holder releases through the mutex: it stays the holder, and
                // alive, while this waiter queues and donates its priority.
                let (exchanged, original) = word.atomic.compareExchange(
                    expected: held, desired: held | AsyncLockWord.waitersBit, ordering: .acquiring)
                if exchanged { break }
                held = original
                continue
            }
            held = word.atomic.load(ordering: .acquiring)
        }
        waiter.continuation = continuation
        waiter.stage = .queued
        waiter.previous = last
        if let last { last.next = waiter } else { first = waiter }
        last = waiter
        waitingCount += 1
        waitingPriorities.add(waiter.priority)
        return .wait(donating: donation(waiter.priority))
    }

    /// Takes a queued waiter out of the list.
    private mutating func unlink(_ waiter: AsyncLockWaiter) {
        let next = waiter.next
        if let previous = waiter.previous { previous.next = next } else { first = next }
        if let next { next.previous = waiter.previous } else { last = waiter.previous }
        waiter.next = nil
        waiter.previous = nil
        waitingCount -= 1
        waitingPriorities.remove(waiter.priority)
    }

    enum Release {
        /// No task waits: the lock is free.
        case free
        /// The lock is handed to the waiter of this continuation, to resume after the mutex is
        /// released. With a priority (a waiter behind it has a higher one), the caller first
        /// raises the new holder's task to it, as for `Enqueue.wait(donating:)`.
        case handOver(Continuation, donating: Priority?)
    }

    /// Releases the lock, when its word says a task waits (or waited): hands it to the first
    /// waiter, or frees it.
    mutating func release() -> Release {
        guard let next = first else {
            holderPriority = nil
            word.atomic.store(0, ordering: .releasing)
            return .free
        }
        unlink(next)
        next.stage = .handedOver
        let continuation = next.continuation.take()!
        guard waitingCount > 0 else {
            // No one left behind it: the new holder may release on the fast path.
            holderPriority = nil
            word.atomic.store(next.owner.taskBits, ordering: .releasing)
            return .handOver(continuation, donating: nil)
        }
        holderPriority = next.priority
        word.atomic.store(next.owner.taskBits | AsyncLockWord.waitersBit, ordering: .releasing)
        return .handOver(continuation, donating: waitingPriorities.highest.flatMap(donation))
    }

    /// Takes a cancelled waiter, or one whose time ran out, out: `nil` if it was already handed
    /// the lock, or has not queued yet (it then finds itself withdrawn when it comes to queue).
    ///
    /// - Returns: The continuation to resume, if the waiter was queued.
    mutating func cancel(_ waiter: AsyncLockWaiter) -> Continuation? {
        switch waiter.stage {
        case .arriving:
            waiter.stage = .withdrawn
            return nil
        case .queued:
            unlink(waiter)
            waiter.stage = .withdrawn
            return waiter.continuation.take()
        case .handedOver, .withdrawn:
            return nil
        }
    }

    /// Whether a resumed waiter was handed the lock. Asked by a waiter that may have been
    /// withdrawn (its task is cancelled, or its timer fired).
    func takeOutcome(_ waiter: AsyncLockWaiter) -> Bool {
        waiter.stage == .handedOver
    }

    /// The holder's task now runs at `priority`, as the caller read or raised it for a donation.
    mutating func donated(holderPriority priority: TaskPriority) {
        holderPriority = Priority(priority)
    }

    /// The priority a waiter of `priority` is to donate to the holder: `nil` if the holder is
    /// known to run at least that high. Donating raises a low-priority holder that a
    /// high-priority task waits for, so that medium-priority work does not starve it.
    private func donation(_ priority: Priority) -> Priority? {
        if let known = holderPriority, known.rawValue >= priority.rawValue { return nil }
        guard word.holder != 0 else { return nil }
        return priority
    }
}

/// A task waiting for an ``AsyncLock``: its node in the lock's queue, taken when the task finds
/// the lock held and kept by the waiting task (and, while it is queued, by the queue).
///
/// The node is also the timer of a wait with a deadline on `ContinuousClock` (every
/// `withLock(timeout:)`): armed in ``DeadlineTimers`` when the waiter queues, disarmed when its
/// wait ends, so that a timed wait allocates nothing beyond the node. While it is armed it keeps
/// the lock (`timedLock`), so that a timer firing as its waiter returns finds the lock alive.
///
/// A node whose wait ended with the lock handed over, its timer disarmed and its task not
/// cancelled is referenced by nothing that will touch it again; the lock keeps one such node
/// aside for the next task that waits (see `AsyncLock.recycle(_:)`), which sets its owner and
/// priority anew. `stage`, `expired` and the links are guarded by the lock's mutex; the owner,
/// priority, deadline and `timedLock` are set by the waiting task before the node is queued or
/// armed, and cleared only when it is recycled.
@usableFromInline
final class AsyncLockWaiter: DeadlineTimer, @unchecked Sendable {  // see above
    /// Where a waiter is in its wait.
    enum Stage {
        /// Made (or taken from the spare) and not queued yet.
        case arriving
        case queued
        /// The lock is the waiter's.
        case handedOver
        /// Taken out, or stopped before it queued, by its cancellation handler or its timer.
        case withdrawn
    }

    var owner: AsyncLockStateMachine.Owner
    var priority: AsyncLockStateMachine.Priority
    var stage = Stage.arriving
    /// Set when the waiter queues, taken when it is taken out.
    var continuation: UnsafeContinuation<Void, Never>?
    var next: AsyncLockWaiter?
    /// The waiter ahead, which keeps this one through its `next`.
    unowned(unsafe) var previous: AsyncLockWaiter?
    /// The lock whose wait this node's timer ends, while the node is armed as a timer; `nil` for
    /// a wait with no deadline on `ContinuousClock`.
    var timedLock: AsyncLock?
    /// Whether the waiter's deadline came while it waited.
    var expired = false

    init(owner: AsyncLockStateMachine.Owner, priority: AsyncLockStateMachine.Priority) {
        self.owner = owner
        self.priority = priority
        super.init(deadline: .max)
    }

    /// The deadline has come: the lock takes the waiter out, unless it was handed the lock.
    override func fire() {
        timedLock?.expire(self)
    }

    /// Makes a node whose last wait ended with the lock handed over the node of a new waiter.
    func reuse(owner: AsyncLockStateMachine.Owner, priority: AsyncLockStateMachine.Priority) {
        self.owner = owner
        self.priority = priority
        stage = .arriving
        expired = false
    }
}

/// How many waiters have each priority: a handful of distinct priorities at most, so a short
/// sorted array.
struct PriorityCounts {
    private var counts: [(priority: AsyncLockStateMachine.Priority, count: Int)] = []

    var highest: AsyncLockStateMachine.Priority? { counts.last?.priority }

    mutating func add(_ priority: AsyncLockStateMachine.Priority) {
        if let index = counts.firstIndex(where: { $0.priority.rawValue >= priority.rawValue }) {
            if counts[index].priority.rawValue == priority.rawValue {
                counts[index].count += 1
            } else {
                counts.insert((priority, 1), at: index)
            }
        } else {
            counts.append((priority, 1))
        }
    }

    mutating func remove(_ priority: AsyncLockStateMachine.Priority) {
        guard let index = counts.firstIndex(where: { $0.priority.rawValue == priority.rawValue }) else { return }
        counts[index].count -= 1
        if counts[index].count == 0 { counts.remove(at: index) }
    }
}
