/// The deadline of a timed wait, on the clock the caller chose, with the clock's type erased so
/// that one slow path serves every clock.
///
/// A wait arms one timer only once it is about to suspend, and disarms it as soon as the wait
/// ends, whichever way. On `ContinuousClock` (every wait given a `Duration`) the timer is an
/// entry in ``DeadlineTimers``, the process's one Dispatch timer; on any other clock it is a task
/// sleeping on that clock until the deadline, cancelled when the wait ends. Either way no task is
/// left sleeping for a waiter that has returned.
struct WaitDeadline: Sendable {
    /// What the caller asked for, for ``TimeoutError``: the duration it gave, or the time from
    /// the call to the deadline on a clock whose durations are `Duration`.
    let timeout: Duration?
    private let clock: Kind

    private enum Kind: Sendable {
        case continuous(ContinuousClock.Instant)
        case other(hasPassed: @Sendable () -> Bool, sleep: @Sendable () async throws -> Void)
    }

    init<C: Clock>(_ deadline: C.Instant, clock: C, timeout: Duration?) {
        self.timeout = timeout ?? (clock.now.duration(to: deadline) as? Duration)
        if let deadline = deadline as? ContinuousClock.Instant {
            self.clock = .continuous(deadline)
        } else {
            self.clock = .other(
                hasPassed: { clock.now >= deadline },
                sleep: { try await clock.sleep(until: deadline, tolerance: nil) })
        }
    }

    /// Whether the deadline has come.
    var hasPassedNow: Bool {
        switch clock {
        case .continuous(let deadline): ContinuousClock.now >= deadline
        case .other(let hasPassed, _): hasPassed()
        }
    }

    /// Sleeps on the clock until the deadline; throws `CancellationError` if cancelled first.
    func sleepUntilDeadline() async throws {
        switch clock {
        case .continuous(let deadline): try await ContinuousClock().sleep(until: deadline, tolerance: nil)
        case .other(_, let sleep): try await sleep()
        }
    }

    /// Starts the timer: `expire` runs once the deadline has come, unless the timer is disarmed
    /// first.
    func arm(_ expire: @escaping @Sendable () -> Void) -> ArmedTimer {
        switch clock {
        case .continuous(let deadline):
            return .shared(DeadlineTimers.shared.arm(deadline, expire))
        case .other(_, let sleep):
            return .task(
                Task {
                    do { try await sleep() } catch { return }
                    expire()
                })
        }
    }
}

/// The timer of a waiting task, to disarm when its wait ends.
enum ArmedTimer {
    case shared(DeadlineTimers.Token)
    case task(Task<Void, Never>)

    func disarm() {
        switch self {
        case .shared(let token): DeadlineTimers.shared.disarm(token)
        case .task(let task): task.cancel()
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
    ) -> ArmedTimer {
        deadline.arm { [self] in
            mutex.lock()
            expiry.expired = true
            let waiter = withdraw()
            mutex.unlock()
            waiter?.resume()
        }
    }
}
