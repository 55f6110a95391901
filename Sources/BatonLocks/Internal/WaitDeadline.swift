import BatonInternals

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

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
        /// A deadline on `ContinuousClock`, in ``ContinuousNanoseconds``: an integer, so that a
        /// wait carries and compares it as cheaply as any other.
        case continuous(Int64)
        case other(hasPassed: @Sendable () -> Bool, sleep: @Sendable () async throws -> Void)
    }

    /// A deadline `timeout` from now on `ContinuousClock`: what every wait given a `Duration`
    /// waits until.
    init(timeout: Duration) {
        self.timeout = timeout
        self.clock = .continuous(Self.continuousDeadline(timeout: timeout))
    }

    /// The deadline on `ContinuousClock`, in ``ContinuousNanoseconds``; `nil` on another clock.
    var continuousNanoseconds: Int64? {
        if case .continuous(let deadline) = clock { deadline } else { nil }
    }

    /// The deadline `timeout` from now, in ``ContinuousNanoseconds``, saturating.
    static func continuousDeadline(timeout: Duration) -> Int64 {
        let (deadline, overflow) = ContinuousNanoseconds.now.addingReportingOverflow(timeout.wholeNanoseconds)
        return overflow ? (timeout.isPositive ? .max : .min) : deadline
    }

    init<C: Clock>(_ deadline: C.Instant, clock: C, timeout: Duration?) {
        self.timeout = timeout ?? (clock.now.duration(to: deadline) as? Duration)
        if let deadline = deadline as? ContinuousClock.Instant {
            self.clock = .continuous(ContinuousNanoseconds.at(deadline))
        } else {
            self.clock = .other(
                hasPassed: { clock.now >= deadline },
                sleep: { try await clock.sleep(until: deadline, tolerance: nil) })
        }
    }

    /// Whether the deadline has come.
    var hasPassedNow: Bool {
        switch clock {
        case .continuous(let deadline): ContinuousNanoseconds.now >= deadline
        case .other(let hasPassed, _): hasPassed()
        }
    }

    /// Sleeps on the clock until the deadline; throws `CancellationError` if cancelled first.
    func sleepUntilDeadline() async throws {
        switch clock {
        case .continuous(let deadline):
            try await ContinuousClock().sleep(until: ContinuousNanoseconds.instant(deadline), tolerance: nil)
        case .other(_, let sleep): try await sleep()
        }
    }

    /// Arms the timer of a waiter, known to `owner` by its ID or as an object: when the deadline
    /// comes, it takes the waiter out of `owner`'s queue, unless it is disarmed first.
    func armTimer(owner: any TimedWaiterOwner, id: UInt64 = 0, waiter: AnyObject? = nil) -> WaitTimer {
        switch clock {
        case .continuous(let deadline):
            let timer = WaitTimer(deadline: deadline, owner: owner, id: id, waiter: waiter)
            DeadlineTimers.shared.arm(timer)
            return timer
        case .other(_, let sleep):
            let timer = WaitTimer(deadline: .max, owner: owner, id: id, waiter: waiter)
            timer.sleeper = Task {
                do { try await sleep() } catch { return }
                timer.fire()
            }
            return timer
        }
    }
}

/// A primitive whose timed waiters a timer can take out of its queue.
protocol TimedWaiterOwner: WaiterOwner {
    /// Takes out the waiter of this timer, whose time is up, under ``WaiterOwner/mutex``: the
    /// transition a cancellation uses. Returns its continuation, to resume, if it was queued.
    func withdrawTimedOut(_ timer: WaitTimer) -> UnsafeContinuation<Void, Never>?
}

/// The timer of one timed wait, and whether it has fired: the one object a wait that suspends
/// allocates for its deadline.
///
/// On `ContinuousClock` it is an entry of ``DeadlineTimers``; on another clock a task sleeps on
/// that clock and fires it. Either way ``disarm()`` stops it when the wait ends.
@usableFromInline
final class WaitTimer: DeadlineTimer, @unchecked Sendable {  // see each property
    /// Whether the deadline has come: set when the timer fires, under the owner's mutex, and
    /// read under it when the waiter queues, so that a timer that fires before the waiter has
    /// queued still ends the wait (the waiter then does not queue at all).
    var expired = false
    private let owner: any TimedWaiterOwner
    /// The waiter, as its owner knows it: by an ID, or as an object.
    let id: UInt64
    let waiter: AnyObject?
    /// The task sleeping on a clock other than `ContinuousClock`: set when the timer is armed
    /// and read when it is disarmed, both by the waiting task.
    fileprivate var sleeper: Task<Void, Never>?

    init(deadline: Int64, owner: any TimedWaiterOwner, id: UInt64, waiter: AnyObject?) {
        self.owner = owner
        self.id = id
        self.waiter = waiter
        super.init(deadline: deadline)
    }

    /// The deadline has come: marks the wait expired and takes the waiter out of the queue,
    /// resuming it.
    override func fire() {
        owner.mutex.lock()
        expired = true
        let waiter = owner.withdrawTimedOut(self)
        owner.mutex.unlock()
        waiter?.resume()
    }

    /// Stops the timer when the wait ends: it will not fire, unless it is firing or has fired.
    ///
    /// - Returns: `true` if the timer is known never to fire (it was still armed), so it did not
    ///   and will not take the waiter out; `false` if it may have (a timer on another clock
    ///   always answers `false`: its sleeping task may be firing it).
    @discardableResult
    func disarm() -> Bool {
        if let sleeper {
            sleeper.cancel()
            return false
        }
        return DeadlineTimers.shared.disarm(self)
    }
}

/// Instants of `ContinuousClock` as whole nanoseconds from a fixed instant of the process:
/// integers, which the timed waits and ``DeadlineTimers`` compare and move without the calls
/// that the clock's own (resilient) instant type costs. Saturating at the bounds of `Int64`
/// (about ±292 years from the process's start), so a timeout of any length is a deadline.
///
/// `now` reads the system clock that `ContinuousClock` reads (`CLOCK_BOOTTIME` on Linux,
/// `CLOCK_MONOTONIC_RAW` on Apple platforms, `CLOCK_MONOTONIC` elsewhere, as the Swift runtime
/// does) with one `clock_gettime`, rather than through `ContinuousClock.now` and `Duration`'s
/// 128-bit arithmetic; instants given by callers are placed on the same scale through `origin`,
/// read together with the clock's own reading of it (the two agree within the time between
/// the two reads, well under a microsecond).
enum ContinuousNanoseconds {
    /// The instant that is zero, as `ContinuousClock` gives it and as the system clock's reading.
    private static let origin: (instant: ContinuousClock.Instant, raw: Int64) = {
        let raw = readClock()
        return (ContinuousClock.now, raw)
    }()

    /// The system clock's reading at `origin`: apart, so that `now` reads an integer rather than
    /// a copy of the pair (whose instant is of a resilient type).
    private static let originRaw = origin.raw

    /// Now.
    static var now: Int64 { readClock() &- originRaw }

    /// `instant` on this scale.
    static func at(_ instant: ContinuousClock.Instant) -> Int64 {
        origin.instant.duration(to: instant).wholeNanoseconds
    }

    /// The instant that is `nanoseconds` on this scale.
    static func instant(_ nanoseconds: Int64) -> ContinuousClock.Instant {
        origin.instant.advanced(by: .nanoseconds(nanoseconds))
    }

    /// The system clock's reading, in nanoseconds.
    private static func readClock() -> Int64 {
        var time = timespec()
        #if os(Linux) || os(Android)
        clock_gettime(CLOCK_BOOTTIME, &time)
        #elseif canImport(Darwin)
        clock_gettime(CLOCK_MONOTONIC_RAW, &time)
        #else
        clock_gettime(CLOCK_MONOTONIC, &time)
        #endif
        return Int64(time.tv_sec) &* 1_000_000_000 &+ Int64(time.tv_nsec)
    }
}
