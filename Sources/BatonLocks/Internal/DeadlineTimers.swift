import Dispatch

/// The timers of the timed waits on `ContinuousClock` (every wait given a `Duration`), for the
/// whole process: one Dispatch timer source, set for the earliest armed deadline.
///
/// Arming a timer is a few instructions under a mutex (a push onto a heap); disarming it, when
/// its wait ends in time, is a removal from the heap. The Dispatch source is re-set only when a
/// deadline earlier than every armed one arrives — rarely, when waits share a timeout, as their
/// deadlines then come in order. When it fires it runs the expired timers' actions on its own
/// serial queue and sets itself for the next deadline. No task sleeps for a waiter, and nothing
/// polls: with no timer armed, the source is left to fire once more at most, and finds nothing.
final class DeadlineTimers: @unchecked Sendable {  // `mutex` guards `heap`, `nextID` and `scheduledFor`
    static let shared = DeadlineTimers()

    /// An armed timer, to disarm.
    struct Token: Sendable {
        fileprivate let id: UInt64
    }

    private let mutex = PlatformMutex()
    private var heap = DeadlineHeap()
    private var nextID: UInt64 = 0
    /// The deadline the source is set for, `nil` when it is not set.
    private var scheduledFor: ContinuousClock.Instant?
    private let queue = DispatchQueue(label: "Baton.DeadlineTimers")
    private let source: any DispatchSourceTimer

    init() {
        source = DispatchSource.makeTimerSource(queue: queue)
        source.setEventHandler { [unowned self] in fire() }
        source.activate()
    }

    deinit {
        // Only instances of the tests end (the shared one lives as long as the process): their
        // source must not fire into a freed instance.
        source.cancel()
    }

    /// Runs `action` on the timers' queue once `deadline` has come, unless disarmed first.
    func arm(_ deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> Token {
        mutex.lock()
        nextID &+= 1
        let id = nextID
        heap.insert(deadline: deadline, id: id, action: action)
        if scheduledFor.map({ deadline < $0 }) ?? true {
            // Set under the mutex, so that a later, earlier deadline is never overwritten.
            scheduledFor = deadline
            schedule(for: deadline)
        }
        mutex.unlock()
        return Token(id: id)
    }

    /// Disarms a timer: its action will not run, unless it is running or has run already.
    func disarm(_ token: Token) {
        mutex.lock()
        heap.remove(id: token.id)
        mutex.unlock()
    }

    /// The timers armed now (for tests).
    var armedCount: Int {
        mutex.lock()
        defer { mutex.unlock() }
        return heap.count
    }

    /// Sets the source for `deadline`; called under `mutex`, and never blocks.
    private func schedule(for deadline: ContinuousClock.Instant) {
        let delay = ContinuousClock.now.duration(to: deadline)
        source.schedule(deadline: .now() + delay.dispatchInterval, leeway: .nanoseconds(0))
    }

    /// The source fired: runs every expired action, then sets the source for the next deadline.
    private func fire() {
        mutex.lock()
        let now = ContinuousClock.now
        var expired: [@Sendable () -> Void] = []
        while let action = heap.popFirst(dueBy: now) { expired.append(action) }
        scheduledFor = heap.earliest
        if let next = scheduledFor { schedule(for: next) }
        mutex.unlock()
        for action in expired { action() }
    }
}

/// The armed deadlines, earliest first: a binary min-heap whose entries know their place, so
/// that a timer disarmed before its deadline (the common case) leaves in O(log n).
///
/// Pure state, not thread-safe: it lives under ``DeadlineTimers``'s mutex.
struct DeadlineHeap {
    private struct Entry {
        let deadline: ContinuousClock.Instant
        let id: UInt64
        let action: @Sendable () -> Void
    }

    private var entries: [Entry] = []
    /// Where each armed timer's entry is in `entries`.
    private var positions: [UInt64: Int] = [:]

    var count: Int { entries.count }

    /// The earliest deadline armed, if any.
    var earliest: ContinuousClock.Instant? { entries.first?.deadline }

    mutating func insert(deadline: ContinuousClock.Instant, id: UInt64, action: @escaping @Sendable () -> Void) {
        entries.append(Entry(deadline: deadline, id: id, action: action))
        positions[id] = entries.count - 1
        siftUp(entries.count - 1)
    }

    /// Takes out the timer with this ID, if it is still armed.
    mutating func remove(id: UInt64) {
        guard let index = positions.removeValue(forKey: id) else { return }
        let last = entries.count - 1
        if index != last {
            entries.swapAt(index, last)
            positions[entries[index].id] = index
        }
        entries.removeLast()
        if index < entries.count {
            siftDown(index)
            siftUp(index)
        }
    }

    /// Takes out the earliest timer if its deadline is at or before `now`, and returns its action.
    mutating func popFirst(dueBy now: ContinuousClock.Instant) -> (@Sendable () -> Void)? {
        guard let first = entries.first, first.deadline <= now else { return nil }
        remove(id: first.id)
        return first.action
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].deadline < entries[parent].deadline else { return }
            swap(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < entries.count else { return }
            let right = left + 1
            var smallest = left
            if right < entries.count && entries[right].deadline < entries[left].deadline { smallest = right }
            guard entries[smallest].deadline < entries[parent].deadline else { return }
            swap(parent, smallest)
            parent = smallest
        }
    }

    private mutating func swap(_ a: Int, _ b: Int) {
        entries.swapAt(a, b)
        positions[entries[a].id] = a
        positions[entries[b].id] = b
    }
}
