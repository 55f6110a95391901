import BatonInternals

/// A token bucket for Swift concurrency: at most `permits` per `interval` on average, with bursts
/// of up to `burst` at once, and tasks that wait for their turn without blocking a thread.
///
/// Use it to keep to a rate that someone else sets — a service's "100 requests a minute", a
/// database's writes per second:
///
/// ```swift
/// let limiter = RateLimiter(permits: 100, per: .seconds(60), burst: 10)
///
/// for order in orders {
///     try await limiter.acquire()       // waits while the minute's permits are used up
///     try await api.submit(order)
/// }
/// ```
///
/// - **A token bucket.** The bucket starts full, holds at most `burst` permits (`permits` by
///   default) and refills by `permits` every `interval`, one permit at a time, each at the exact
///   moment its share of the interval has passed (permit `m` of an interval at
///   `m × interval / permits`, rounded up to the nanosecond). Time is read from the clock's
///   instants and counted in whole nanoseconds, with integer arithmetic only: no drift, and no
///   refill counted twice. When the bucket is full, what accrues is lost, the fraction of the
///   next permit too. So over **any** window of time, the permits granted are at most
///   `burst + permits × window / interval`.
/// - **First come, first served.** Waiting tasks are served in the order they called
///   ``acquire(_:isolation:)``: a later small request never overtakes an earlier large one, and
///   ``tryAcquire(_:)`` fails while anyone waits, even if the bucket holds enough.
/// - **Cancellation takes nothing.** A task cancelled while it waits leaves the queue at once,
///   with nothing, and throws `CancellationError`; the tasks behind it may then be served. A task
///   already cancelled throws without taking anything. A task granted its permits at the moment
///   it is cancelled gives them back and throws.
/// - **No polling.** While tasks wait, exactly one timer task sleeps on the clock, until the
///   first waiter can be served; none sleeps once no one waits.
///
/// `acquire(n)` with `n` above `burst` could never be served: it is a precondition failure, as
/// are fewer than one permit, an interval that is not positive and a burst below one.
///
/// Thread safety: every method may be called from any thread or task. The state is guarded by a
/// Baton futex lock held for a few instructions (the clock is read under it); continuations are
/// resumed, and timer tasks started and cancelled, after it is released.
public final class RateLimiter {
    /// Permits per ``interval``.
    public let permits: Int
    /// The time over which ``permits`` accrue.
    public let interval: Duration
    /// The most permits the bucket holds, and so the largest burst.
    public let burst: Int

    /// Guards `machine`.
    let mutex = PlatformMutex()
    /// Guarded by `mutex`. The mutex, not the runtime's exclusivity check, keeps accesses apart.
    @exclusivity(unchecked) private var machine: RateLimiterStateMachine
    /// Nanoseconds since the limiter was made, on its clock.
    private let now: @Sendable () -> Int64
    /// Sleeps until that many nanoseconds since the limiter was made, on its clock.
    private let sleep: @Sendable (Int64) async throws -> Void

    /// Creates a limiter of `permits` per `interval` on the continuous clock.
    ///
    /// - Parameters:
    ///   - permits: The permits that accrue over `interval` (at least 1).
    ///   - interval: The time over which they accrue (positive; counted in whole nanoseconds,
    ///     rounded up).
    ///   - burst: The most permits the bucket holds (at least 1); `permits` by default. The
    ///     bucket starts full.
    public convenience init(permits: Int, per interval: Duration, burst: Int? = nil) {
        self.init(permits: permits, per: interval, burst: burst, clock: ContinuousClock())
    }

    /// Creates a limiter of `permits` per `interval` on `clock`.
    ///
    /// Give a manual clock in tests, so that they advance time instead of sleeping.
    ///
    /// - Parameters:
    ///   - permits: The permits that accrue over `interval` (at least 1).
    ///   - interval: The time over which they accrue (positive; counted in whole nanoseconds,
    ///     rounded up).
    ///   - burst: The most permits the bucket holds (at least 1); `permits` by default. The
    ///     bucket starts full.
    ///   - clock: The clock whose instants measure time, and on which the timer sleeps.
    public init<C: Clock>(permits: Int, per interval: Duration, burst: Int? = nil, clock: C)
    where C.Duration == Duration {
        precondition(permits >= 1, "RateLimiter: permits must be at least 1 (got \(permits))")
        precondition(interval > .zero, "RateLimiter: the interval must be positive (got \(interval))")
        let burst = burst ?? permits
        precondition(burst >= 1, "RateLimiter: burst must be at least 1 (got \(burst))")
        var nanoseconds = interval.wholeNanoseconds
        if Duration.nanoseconds(nanoseconds) < interval { nanoseconds += 1 }
        self.permits = permits
        self.interval = interval
        self.burst = burst
        machine = RateLimiterStateMachine(permits: permits, interval: nanoseconds, burst: burst)
        let origin = clock.now
        now = { origin.duration(to: clock.now).wholeNanoseconds }
        sleep = { try await clock.sleep(until: origin.advanced(by: .nanoseconds($0)), tolerance: nil) }
    }

    deinit {
        mutex.deallocate()
    }

    /// Takes `count` permits, suspending the calling task until they are granted.
    ///
    /// Returns at once when the bucket holds them and no task waits. Otherwise the task queues
    /// behind the earlier waiters and suspends (no thread is blocked) until the bucket holds
    /// enough for it and every earlier waiter is served.
    ///
    /// - Parameters:
    ///   - count: The permits to take, from 1 to ``burst``.
    ///   - isolation: The caller's actor, inherited so that calling from an actor does not hop
    ///     off it; leave the default.
    /// - Throws: `CancellationError` if the task is cancelled before or while it waits; it then
    ///   takes nothing, and the waiters behind it may be served.
    /// - Precondition: `1 <= count <= burst`: more than the bucket holds could never be granted.
    public func acquire(
        _ count: Int = 1, isolation: isolated (any Actor)? = #isolation
    ) async throws(CancellationError) {
        precondition(count >= 1, "RateLimiter.acquire: count must be at least 1 (got \(count))")
        precondition(
            count <= burst,
            "RateLimiter.acquire: \(count) permits could never be granted: the bucket holds at most \(burst)")
        if Task.isCancelled { throw CancellationError() }
        mutex.lock()
        let taken = machine.tryAcquire(count, now: now())
        let id = taken ? 0 : machine.makeID()
        mutex.unlock()
        if taken { return }

        await withTaskCancellationHandler {
            await withUnsafeContinuation(isolation: isolation) { continuation in
                mutex.lock()
                let (resumeNow, timer) = machine.enqueue(
                    continuation, id: id, count: count, now: now(), cancelled: Task.isCancelled)
                mutex.unlock()
                perform(RateLimiterStateMachine.Effects(timer: timer))
                resumeNow?.resume()
            }
        } onCancel: {
            mutex.lock()
            let effects = machine.cancel(id: id, now: now())
            mutex.unlock()
            perform(effects)
        }
        mutex.lock()
        let granted = machine.takeOutcome(id: id)
        mutex.unlock()
        guard granted else { throw CancellationError() }
        if Task.isCancelled {
            // Granted as the task was being cancelled: give the permits back rather than spend
            // them on a cancelled task's work.
            mutex.lock()
            let effects = machine.giveBack(count, now: now())
            mutex.unlock()
            perform(effects)
            throw CancellationError()
        }
    }

    /// Takes `count` permits if the bucket holds them and no task waits; never waits.
    ///
    /// - Parameter count: The permits to take, from 1 to ``burst``.
    /// - Returns: `true` if it took them; `false` if the bucket holds fewer, or tasks wait (they
    ///   come first).
    /// - Precondition: `1 <= count <= burst`.
    public func tryAcquire(_ count: Int = 1) -> Bool {
        precondition(count >= 1, "RateLimiter.tryAcquire: count must be at least 1 (got \(count))")
        precondition(
            count <= burst,
            "RateLimiter.tryAcquire: \(count) permits could never be granted: the bucket holds at most \(burst)")
        mutex.lock()
        defer { mutex.unlock() }
        return machine.tryAcquire(count, now: now())
    }

    // MARK: Effects and the timer

    /// Does what a transition left to do once the mutex is released: cancels or starts a timer
    /// task, and resumes the waiters served.
    private func perform(_ effects: RateLimiterStateMachine.Effects) {
        switch effects.timer {
        case .keep:
            break
        case .disarm(let task):
            task?.cancel()
        case .arm(let generation, let deadline, let replaced):
            replaced?.cancel()
            startTimer(generation: generation, deadline: deadline)
        }
        for continuation in effects.resume { continuation.resume() }
    }

    /// Starts the task of the timer of `generation`: it sleeps until `deadline`, serves the
    /// waiters that can be served then, and sleeps again until the next can be, as long as it is
    /// the armed timer and someone waits.
    private func startTimer(generation: UInt64, deadline: Int64) {
        let task = Task { [self] in
            var deadline = deadline
            while (try? await sleep(deadline)) != nil {
                mutex.lock()
                let (resumed, next) = machine.timerFired(generation: generation, now: now())
                mutex.unlock()
                for continuation in resumed { continuation.resume() }
                guard let next else { break }
                deadline = next
            }
            mutex.lock()
            machine.timerEnded()
            mutex.unlock()
        }
        mutex.lock()
        let armed = machine.timerStarted(task, generation: generation)
        mutex.unlock()
        // Replaced or disarmed before it could be recorded: no one else will cancel it.
        if !armed { task.cancel() }
    }

    // MARK: For tests

    /// The tasks waiting now (it may change as soon as it is read).
    var waitingCount: Int {
        mutex.lock()
        defer { mutex.unlock() }
        return machine.waitingCount
    }

    /// Whether a timer is armed now: exactly when tasks wait.
    var isTimerArmed: Bool {
        mutex.lock()
        defer { mutex.unlock() }
        return machine.isTimerArmed
    }

    /// Timer tasks started and not yet ended: none soon after no one waits.
    var timerTasks: Int {
        mutex.lock()
        defer { mutex.unlock() }
        return machine.timerTasks
    }
}

// `mutex` guards `machine`; every other stored property is immutable and Sendable.
extension RateLimiter: @unchecked Sendable {}
