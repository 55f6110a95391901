/// The deadline of a timed wait, on the clock the caller chose, with the clock's type erased so
/// that one slow path serves every clock.
///
/// A wait arms one timer (a task sleeping on the clock until the deadline) only once it is about
/// to suspend, and cancels it as soon as the wait ends, whichever way: no task is left sleeping
/// for a waiter that has returned.
struct WaitDeadline: Sendable {
    /// What the caller asked for, for ``TimeoutError``: the duration it gave, or the time from
    /// the call to the deadline on a clock whose durations are `Duration`.
    let timeout: Duration?
    private let hasPassed: @Sendable () -> Bool
    private let sleep: @Sendable () async throws -> Void

    init<C: Clock>(_ deadline: C.Instant, clock: C, timeout: Duration?) {
        self.timeout = timeout ?? (clock.now.duration(to: deadline) as? Duration)
        hasPassed = { clock.now >= deadline }
        sleep = { try await clock.sleep(until: deadline, tolerance: nil) }
    }

    /// Whether the deadline has come.
    var hasPassedNow: Bool { hasPassed() }

    /// Sleeps on the clock until the deadline; throws `CancellationError` if cancelled first.
    func sleepUntilDeadline() async throws {
        try await sleep()
    }

    /// Starts the timer: `expire` runs once the deadline has come, unless the returned task is
    /// cancelled first.
    func arm(_ expire: @escaping @Sendable () -> Void) -> Task<Void, Never> {
        Task { [sleep] in
            do { try await sleep() } catch { return }
            expire()
        }
    }
}

/// Whether a timed waiter's deadline has come: set by its timer under the primitive's mutex, and
/// read under it when the waiter queues, so that a timer that fires before the waiter has queued
/// still ends the wait (the waiter then does not queue at all).
final class WaitExpiry {
    /// Guarded by the primitive's mutex.
    var expired = false
}

// `expired` is guarded by the mutex of the primitive that created it.
extension WaitExpiry: @unchecked Sendable {}

extension WaiterOwner {
    /// Arms the timer of a waiter: when `deadline` comes it marks `expiry` and, under ``mutex``,
    /// takes the waiter out with `withdraw` (the transition a cancellation uses), resuming it.
    func armTimer(
        _ deadline: WaitDeadline, expiry: WaitExpiry,
        withdraw: @escaping @Sendable () -> UnsafeContinuation<Void, Never>?
    ) -> Task<Void, Never> {
        deadline.arm { [self] in
            mutex.lock()
            expiry.expired = true
            let waiter = withdraw()
            mutex.unlock()
            waiter?.resume()
        }
    }
}
