import BatonInternals
import Dispatch

/// The timers of the timed waits on `ContinuousClock` (every wait given a `Duration`), for the
/// whole process: one Dispatch timer source, set for the earliest armed deadline.
///
/// Arming a timer is a push onto a heap under a mutex; disarming it, when its wait ends in time,
/// is a removal from the heap at the place the timer keeps (no lookup). Deadlines are kept as
/// ``ContinuousNanoseconds``, so that comparing and moving them costs what it costs for integers. The Dispatch source is re-set only when a deadline earlier than every
/// armed one arrives — rarely, when waits share a timeout, as their deadlines then come in order.
/// When it fires it runs the expired timers' actions on its own serial queue and sets itself for
/// the next deadline. No task sleeps for a waiter, and nothing polls: with no timer armed, the
/// source is left to fire once more at most, and finds nothing.
final class DeadlineTimers: @unchecked Sendable {  // `mutex` guards `heap` and `scheduledFor`
    static let shared = DeadlineTimers()

    private let mutex = PlatformMutex()
    /// Guarded by `mutex`, as `scheduledFor`.
    private let heap = DeadlineHeap()
    /// The deadline the source is set for (in ``ContinuousNanoseconds``), `nil` when it is not set.
    @exclusivity(unchecked) private var scheduledFor: Int64?
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
        mutex.deallocate()
    }

    /// Runs `action` on the timers' queue once `deadline` has come, unless disarmed first.
    @discardableResult
    func arm(_ deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> DeadlineTimer {
        let timer = ActionTimer(deadline: ContinuousNanoseconds.at(deadline), action: action)
        arm(timer)
        return timer
    }

    /// Arms `timer`: its ``DeadlineTimer/fire()`` runs on the timers' queue once its deadline has
    /// come, unless it is disarmed first. A timer is armed once.
    func arm(_ timer: DeadlineTimer) {
        mutex.lock()
        heap.insert(timer)
        if scheduledFor.map({ timer.deadline < $0 }) ?? true {
            // Set under the mutex, so that a later, earlier deadline is never overwritten.
            scheduledFor = timer.deadline
            schedule(for: timer.deadline)
        }
        mutex.unlock()
    }

    /// Disarms a timer: it will not fire, unless it is firing or has fired already.
    ///
    /// - Returns: `true` if the timer was still armed, so it never fires; `false` if it is
    ///   firing or has fired (or was never armed).
    @discardableResult
    func disarm(_ timer: DeadlineTimer) -> Bool {
        mutex.lock()
        let wasArmed = heap.remove(timer)
        mutex.unlock()
        return wasArmed
    }

    /// The timers armed now (for tests).
    var armedCount: Int {
        mutex.lock()
        defer { mutex.unlock() }
        return heap.count
    }

    /// Sets the source for `deadline`; called under `mutex`, and never blocks.
    private func schedule(for deadline: Int64) {
        let delay = Duration.nanoseconds(deadline) - .nanoseconds(ContinuousNanoseconds.now)
        source.schedule(deadline: .now() + delay.dispatchInterval, leeway: .nanoseconds(0))
    }

    /// The source fired: fires every expired timer, then sets the source for the next deadline.
    private func fire() {
        mutex.lock()
        let now = ContinuousNanoseconds.now
        var expired: [DeadlineTimer] = []
        while let timer = heap.popFirst(dueBy: now) { expired.append(timer) }
        scheduledFor = heap.earliest
        if let next = scheduledFor { schedule(for: next) }
        mutex.unlock()
        for timer in expired { timer.fire() }
    }
}

/// A timer of ``DeadlineTimers``: a deadline, and what to do when it comes (``fire()``, which a
/// subclass overrides). It knows its place in the heap, so that disarming it needs no lookup.
@usableFromInline
class DeadlineTimer: @unchecked Sendable {  // `index` is guarded by the mutex of the heap's owner
    /// In ``ContinuousNanoseconds``. Set before the timer is armed, never while it is (a timer
    /// that is armed again, as an `AsyncLock`'s recycled waiter is, may have a new one).
    var deadline: Int64
    /// Where the timer is in the heap; `nil` while it is not in it (not armed yet, fired or
    /// disarmed).
    fileprivate var index: Int?

    init(deadline: Int64) {
        self.deadline = deadline
    }

    /// The deadline has come. Runs on the timers' queue, with no lock held.
    func fire() {}
}

/// A timer that runs a closure.
final class ActionTimer: DeadlineTimer, @unchecked Sendable {
    private let action: @Sendable () -> Void

    init(deadline: Int64, action: @escaping @Sendable () -> Void) {
        self.action = action
        super.init(deadline: deadline)
    }

    override func fire() { action() }
}

/// The armed deadlines, earliest first: a binary min-heap of timers that know their place in it,
/// so that a timer disarmed before its deadline (the common case) leaves in O(log n), without a
/// lookup.
///
/// Each entry keeps its deadline beside the timer, so that sifting compares integers in the array
/// and touches no timer but to tell it its new place; the heap keeps each armed timer alive with
/// one retain, taken when it is armed and given back when it leaves, rather than with a retain
/// and a release at every move.
///
/// Pure state, not thread-safe: it lives under ``DeadlineTimers``'s mutex, which also guards each
/// timer's place. A class, so that a heap that ends gives back the retains of the timers still
/// in it.
final class DeadlineHeap {
    private struct Entry {
        let deadline: Int64
        let timer: Unmanaged<DeadlineTimer>
    }

    /// Guarded by the owner's mutex, not by the runtime's exclusivity check.
    @exclusivity(unchecked) private var entries: [Entry] = []

    init() {}

    deinit {
        for entry in entries { entry.timer.release() }
    }

    var count: Int { entries.count }

    /// The earliest deadline armed, if any.
    var earliest: Int64? { entries.first?.deadline }

    func insert(_ timer: DeadlineTimer) {
        precondition(timer.index == nil, "DeadlineHeap: a timer that is armed was armed again")
        let entry = Entry(deadline: timer.deadline, timer: .passRetained(timer))
        entries.append(entry)
        siftUp(entry, from: entries.count - 1)
    }

    /// Takes the timer out, if it is still armed; returns whether it was.
    @discardableResult
    func remove(_ timer: DeadlineTimer) -> Bool {
        guard let index = timer.index else { return false }
        // The caller holds `timer`, so giving back the heap's retain does not end it here.
        removeEntry(at: index).release()
        return true
    }

    /// Takes out the earliest timer if its deadline is at or before `now`.
    func popFirst(dueBy now: Int64) -> DeadlineTimer? {
        guard let first = entries.first, first.deadline <= now else { return nil }
        return removeEntry(at: 0).takeRetainedValue()
    }

    /// Takes the entry at `index` out, and returns its timer with the heap's retain.
    private func removeEntry(at index: Int) -> Unmanaged<DeadlineTimer> {
        let timer = entries[index].timer
        timer._withUnsafeGuaranteedRef { $0.index = nil }
        let last = entries.removeLast()
        if index < entries.count {
            // The last entry fills the place, moving down or up to where it belongs.
            let settled = siftDown(last, from: index)
            if settled == index { siftUp(last, from: index) }
        }
        return timer
    }

    // The sifts move a hole rather than swap: each entry passed over moves once and is told its
    // new place once, and the moving entry is written once, where it settles. They work on the
    // array's buffer, so that the uniqueness and bounds checks are made once per sift.

    /// Places `entry` at `start` or above, moving each later parent down; returns its place.
    @discardableResult
    private func siftUp(_ entry: Entry, from start: Int) -> Int {
        entries.withUnsafeMutableBufferPointer { buffer in
            var hole = start
            while hole > 0 {
                let parent = (hole - 1) / 2
                guard entry.deadline < buffer[parent].deadline else { break }
                buffer[hole] = buffer[parent]
                buffer[hole].timer._withUnsafeGuaranteedRef { $0.index = hole }
                hole = parent
            }
            buffer[hole] = entry
            entry.timer._withUnsafeGuaranteedRef { $0.index = hole }
            return hole
        }
    }

    /// Places `entry` at `start` or below, moving each earlier child up; returns its place.
    private func siftDown(_ entry: Entry, from start: Int) -> Int {
        entries.withUnsafeMutableBufferPointer { buffer in
            var hole = start
            while true {
                let left = 2 * hole + 1
                guard left < buffer.count else { break }
                let right = left + 1
                let earlier = right < buffer.count && buffer[right].deadline < buffer[left].deadline ? right : left
                guard buffer[earlier].deadline < entry.deadline else { break }
                buffer[hole] = buffer[earlier]
                buffer[hole].timer._withUnsafeGuaranteedRef { $0.index = hole }
                hole = earlier
            }
            buffer[hole] = entry
            entry.timer._withUnsafeGuaranteedRef { $0.index = hole }
            return hole
        }
    }
}
