import Atomics
import CBatonPlatform

/// The slow paths that every Baton lock takes while a diagnostic is on. The locks' inlinable
/// fast paths test one word and call these only when it is non-zero.
@usableFromInline
enum LockTracking {
    /// Takes a lock through the diagnostics: checks re-entry and order before blocking, counts
    /// contention, and records the hold.
    @usableFromInline
    static func acquire(
        _ lock: AnyObject, _ identity: LockIdentity, _ mode: LockHoldMode, file: StaticString,
        line: UInt, tryAcquire: () -> Bool, acquire: () -> Void
    ) {
        _ = trackedAcquire(lock, identity, mode, file, line, checksOrder: true, tryAcquire) {
            acquire()
            return true
        }
    }

    /// Tries to take a lock through the diagnostics. A try never blocks, so it cannot deadlock
    /// and records no order; the hold is recorded so that locks taken under it are.
    @usableFromInline
    static func tryAcquire(
        _ lock: AnyObject, _ identity: LockIdentity, _ mode: LockHoldMode, file: StaticString,
        line: UInt, tryAcquire: () -> Bool
    ) -> Bool {
        let flags = LockDiagnostics.flags()
        guard tryAcquire() else { return false }
        guard flags != 0 else { return true }
        if flags & LockDiagnostics.statisticsBit != 0 { identity.counters?.record(contendedFor: nil) }
        hold(ThreadLockState.current, ObjectIdentifier(lock), identity, mode, file, line, flags)
        return true
    }

    /// Takes a lock with a timeout through the diagnostics. A re-entry is checked, and reported
    /// as ``acquire(_:_:_:file:line:tryAcquire:acquire:)`` reports it, since waiting for a lock
    /// the thread holds can only run out of time. Like a try, a timed acquire gives up rather
    /// than deadlock, so it records no order; the hold is recorded so that locks taken under it
    /// are. An acquisition counts in the statistics, contended with its wait if the first try
    /// failed; a timeout counts nowhere, as a failed try.
    @usableFromInline
    static func timedAcquire(
        _ lock: AnyObject, _ identity: LockIdentity, _ mode: LockHoldMode, file: StaticString,
        line: UInt, tryAcquire: () -> Bool, acquire: () -> Bool
    ) -> Bool {
        trackedAcquire(lock, identity, mode, file, line, checksOrder: false, tryAcquire, acquire)
    }

    /// What ``acquire(_:_:_:file:line:tryAcquire:acquire:)`` and
    /// ``timedAcquire(_:_:_:file:line:tryAcquire:acquire:)`` share: the re-entry check (and the
    /// order check, if `checksOrder`), the contention count and the hold. `acquire` returns
    /// whether it took the lock; `false` (a timeout) records nothing.
    private static func trackedAcquire(
        _ lock: AnyObject, _ identity: LockIdentity, _ mode: LockHoldMode, _ file: StaticString, _ line: UInt,
        checksOrder: Bool, _ tryAcquire: () -> Bool, _ acquire: () -> Bool
    ) -> Bool {
        let flags = LockDiagnostics.flags()
        guard flags != 0 else { return acquire() }
        let thread = ThreadLockState.current
        let id = ObjectIdentifier(lock)
        if flags & LockDiagnostics.orderBit != 0 {
            checkReentry(thread, id, identity, mode, file, line)
            if checksOrder { checkOrder(thread, id, identity, file, line) }
        }
        if flags & LockDiagnostics.statisticsBit != 0, let counters = identity.counters {
            if tryAcquire() {
                counters.record(contendedFor: nil)
            } else {
                let start = ContinuousClock.now
                guard acquire() else { return false }
                counters.record(contendedFor: .now - start)
            }
        } else {
            guard acquire() else { return false }
        }
        hold(thread, id, identity, mode, file, line, flags)
        return true
    }

    /// Releases a lock through the diagnostics, then reports the hold if it was too long: after
    /// the release, so the handler never runs inside this critical section.
    @usableFromInline
    static func release(_ lock: AnyObject, release: () -> Void) {
        let held = ThreadLockState.existing?.release(ObjectIdentifier(lock))
        release()
        guard let held, let since = held.since else { return }
        let duration = ContinuousClock.now - since
        guard let threshold = LockDiagnostics.holdTimeThreshold, duration > threshold else { return }
        LockDiagnostics.report(
            .longHold(
                LongLockHold(
                    lock: held.identity.description, takenAt: held.site, duration: duration,
                    threshold: threshold)))
    }

    /// Called by a lock's deinit: takes the lock out of the order graph, if anything was ever
    /// tracked, before its address can be reused.
    static func forget(_ lock: AnyObject) {
        if baton_lock_diagnostics_used() { LockOrderGraph.shared.remove(ObjectIdentifier(lock)) }
    }

    /// Reports a `Lock` re-locked by its holder (found by the debug owner check) and stops.
    @usableFromInline
    static func reentered(_ lock: AnyObject, _ identity: LockIdentity, file: StaticString, line: UInt) -> Never {
        let first = ThreadLockState.existing?.held.last { $0.id == ObjectIdentifier(lock) }
        let reentry = LockReentry(
            lock: identity.description, firstTakenAt: first?.site, takenAgainAt: SourceSite(file, line),
            deadlocks: true)
        LockDiagnostics.report(.reentry(reentry))
        fatalError(reentry.description)
    }

    private static func hold(
        _ thread: ThreadLockState, _ id: ObjectIdentifier, _ identity: LockIdentity, _ mode: LockHoldMode,
        _ file: StaticString, _ line: UInt, _ flags: UInt32
    ) {
        baton_lock_diagnostics_mark_used()
        let since: ContinuousClock.Instant? = flags & LockDiagnostics.holdTimeBit != 0 ? .now : nil
        thread.held.append(.init(id: id, identity: identity, mode: mode, file: file, line: line, since: since))
    }

    private static func checkReentry(
        _ thread: ThreadLockState, _ id: ObjectIdentifier, _ identity: LockIdentity, _ mode: LockHoldMode,
        _ file: StaticString, _ line: UInt
    ) {
        // A RecursiveLock's owner re-enters without coming here.
        guard let first = thread.held.last(where: { $0.id == id }) else { return }
        let deadlocks = mode == .exclusive || first.mode == .exclusive
        let reentry = LockReentry(
            lock: identity.description, firstTakenAt: first.site, takenAgainAt: SourceSite(file, line),
            deadlocks: deadlocks)
        LockDiagnostics.report(.reentry(reentry))
        if deadlocks { fatalError(reentry.description) }
    }

    private static func checkOrder(
        _ thread: ThreadLockState, _ id: ObjectIdentifier, _ identity: LockIdentity, _ file: StaticString,
        _ line: UInt
    ) {
        guard !thread.held.isEmpty else { return }
        let generation = LockOrderGraph.shared.generation.load(ordering: .acquiring)
        if thread.knownGeneration != generation {
            thread.knownOrders.removeAll()
            thread.knownGeneration = generation
        }
        var inversions: [LockOrderInversion] = []
        for held in thread.held where held.id != id {
            guard thread.knownOrders.insert(LockOrderGraph.Edge(from: held.id, to: id)).inserted else { continue }
            if let inversion = LockOrderGraph.shared.record(
                held: held, acquiring: id, identity, at: SourceSite(file, line))
            {
                inversions.append(inversion)
            }
        }
        for inversion in inversions { LockDiagnostics.report(.lockOrderInversion(inversion)) }
    }
}
