/// The bucket, the waiters and the timer of a ``RateLimiter``: pure state, changed only under the
/// limiter's mutex. Each transition returns what the caller must do once the mutex is released
/// (continuations to resume, a timer task to start or cancel); time comes in as an argument.
///
/// **Time** is a count of whole nanoseconds since the limiter was made, read from its clock's
/// instants, never accumulated: a late or repeated reading changes nothing, and there is no drift.
///
/// **The bucket** refills in exact integer steps. Within a cycle of `interval` nanoseconds that
/// starts at `cycleStart`, the `m`-th permit of the cycle accrues at `⌈m × interval / permits⌉`;
/// `credited` counts those already added, so a refill adds only what accrued since the last one
/// (never twice), and whole cycles move `cycleStart` on by exact multiples of `interval`. When
/// the bucket reaches `burst`, the rest is lost, the fraction of the next permit too: the cycle
/// restarts at that reading, as a bucket filled to the brim starts accruing again from empty
/// space. So the bucket's content, counted with the fraction accrued, never exceeds `burst`, and
/// over any window the permits granted are at most `burst + permits × window / interval`.
///
/// **Waiters** are served first come, first served: only the first waiter can be granted, so a
/// later small request never overtakes an earlier large one, and nothing is taken from the
/// bucket by anyone else while someone waits.
///
/// **The timer**: while waiters exist exactly one timer is armed, for the moment the first one
/// can be served; it is re-armed when the first waiter changes and disarmed when none is left.
/// Each arming gets a new generation: a timer task whose generation is no longer the armed one
/// does nothing and ends.
struct RateLimiterStateMachine {
    typealias Continuation = UnsafeContinuation<Void, Never>

    /// A task waiting for permits.
    struct Waiter {
        let continuation: Continuation
        let permits: Int
    }

    /// What to do with the timer once the mutex is released.
    enum TimerChange {
        /// Nothing.
        case keep
        /// Cancel `cancelling` (the task of the timer replaced, if it had started) and start a
        /// timer task of this generation, sleeping until `deadline`; then report it with
        /// `timerStarted(_:generation:)`.
        case arm(generation: UInt64, deadline: Int64, cancelling: Task<Void, Never>?)
        /// Cancel the task of the timer disarmed, if it had started.
        case disarm(Task<Void, Never>?)
    }

    /// What a transition leaves to do after the mutex is released.
    struct Effects {
        /// Waiters to resume, their outcomes recorded.
        var resume: [Continuation] = []
        var timer: TimerChange = .keep
    }

    /// The armed timer.
    private struct Timer {
        let generation: UInt64
        /// Its task, once started.
        var task: Task<Void, Never>?
    }

    /// Permits accrued per `interval`.
    let permits: Int
    /// Nanoseconds, at least 1.
    let interval: Int64
    /// The most the bucket holds.
    let burst: Int

    /// Whole permits in the bucket.
    private(set) var tokens: Int
    /// When the current refill cycle started, in nanoseconds since the limiter was made.
    private var cycleStart: Int64 = 0
    /// The permits of the current cycle already added to the bucket (fewer than `permits`).
    private var credited = 0

    private var waiters = WaiterQueue<Waiter>()
    /// The outcome of each resumed waiter (`true`: granted), until it takes it.
    private var outcomes: [UInt64: Bool] = [:]
    private var lastID: UInt64 = 0

    private var timer: Timer?
    private var lastGeneration: UInt64 = 0
    /// Timer tasks armed and not yet ended (for tests: none once no one waits).
    private(set) var timerTasks = 0

    init(permits: Int, interval: Int64, burst: Int) {
        self.permits = permits
        self.interval = interval
        self.burst = burst
        tokens = burst
    }

    var waitingCount: Int { waiters.count }
    var isTimerArmed: Bool { timer != nil }

    // MARK: Taking permits

    /// Takes `count` permits if they are in the bucket and no one waits.
    mutating func tryAcquire(_ count: Int, now: Int64) -> Bool {
        guard waiters.count == 0 else { return false }
        refill(now: now)
        guard tokens >= count else { return false }
        tokens -= count
        return true
    }

    /// A new ID for a waiter.
    mutating func makeID() -> UInt64 {
        lastID &+= 1
        return lastID
    }

    /// A task that found too few permits is about to wait for `count`.
    ///
    /// - Parameter cancelled: Whether its task is cancelled; read under the mutex, so that a
    ///   cancellation handler that runs later finds the waiter queued.
    /// - Returns: The continuation to resume at once (its outcome recorded), or `nil` if it now
    ///   waits; and what to do with the timer.
    mutating func enqueue(
        _ continuation: Continuation, id: UInt64, count: Int, now: Int64, cancelled: Bool
    ) -> (resumeNow: Continuation?, timer: TimerChange) {
        if cancelled {
            outcomes[id] = false
            return (continuation, .keep)
        }
        // Permits may have accrued since the caller looked.
        if tryAcquire(count, now: now) {
            outcomes[id] = true
            return (continuation, .keep)
        }
        waiters.append(Waiter(continuation: continuation, permits: count), id: id)
        return (nil, waiters.count == 1 ? arm() : .keep)
    }

    /// The task of the waiter with this ID is cancelled: if it still waits, it leaves the queue
    /// with nothing, and if it was first, those behind it may be served now.
    mutating func cancel(id: UInt64, now: Int64) -> Effects {
        guard let first = waiters.first() else { return Effects() }
        guard let waiter = waiters.remove(id: id) else { return Effects() }
        outcomes[id] = false
        guard first.id == id else { return Effects(resume: [waiter.continuation]) }
        var effects = serveAndRearm(now: now)
        effects.resume.insert(waiter.continuation, at: 0)
        return effects
    }

    /// A waiter granted its permits, whose task was cancelled before it could use them, gives
    /// them back: they go to the waiters, or to the bucket (up to `burst`).
    mutating func giveBack(_ count: Int, now: Int64) -> Effects {
        refill(now: now)
        if count >= burst - tokens {
            fill(now: now)
        } else {
            tokens += count
        }
        return waiters.count == 0 ? Effects() : serveAndRearm(now: now)
    }

    /// The outcome a resumed waiter was resumed for: `true` if it was granted its permits.
    mutating func takeOutcome(id: UInt64) -> Bool {
        outcomes.removeValue(forKey: id)!
    }

    // MARK: The timer

    /// The timer of `generation` is due: serves the waiters that can be served now.
    ///
    /// - Returns: The waiters to resume, and when to fire next; `nil` if this timer is no longer
    ///   armed (its task then ends).
    mutating func timerFired(generation: UInt64, now: Int64) -> (resume: [Continuation], next: Int64?) {
        guard timer?.generation == generation else { return ([], nil) }
        refill(now: now)
        let resumed = serve()
        guard let first = waiters.first() else {
            timer = nil
            return (resumed, nil)
        }
        return (resumed, deadline(for: first.element.permits))
    }

    /// The task of the timer of `generation` has started; `false` if that timer was replaced or
    /// disarmed meanwhile (the caller then cancels the task).
    mutating func timerStarted(_ task: Task<Void, Never>, generation: UInt64) -> Bool {
        guard timer?.generation == generation else { return false }
        timer!.task = task
        return true
    }

    /// A timer task has ended.
    mutating func timerEnded() {
        timerTasks -= 1
    }

    // MARK: Helpers

    /// Serves the waiters that can be served now, then re-arms the timer for the new first
    /// waiter or disarms it.
    private mutating func serveAndRearm(now: Int64) -> Effects {
        refill(now: now)
        let resumed = serve()
        if waiters.count == 0 {
            let task = timer?.task
            timer = nil
            return Effects(resume: resumed, timer: .disarm(task))
        }
        return Effects(resume: resumed, timer: arm())
    }

    /// Grants the first waiters their permits while the bucket holds enough for the first.
    private mutating func serve() -> [Continuation] {
        var resumed: [Continuation] = []
        while let first = waiters.first(), first.element.permits <= tokens {
            tokens -= first.element.permits
            _ = waiters.remove(id: first.id)
            outcomes[first.id] = true
            resumed.append(first.element.continuation)
        }
        return resumed
    }

    /// Arms a new timer for the first waiter, replacing any.
    private mutating func arm() -> TimerChange {
        let first = waiters.first()!
        lastGeneration &+= 1
        let replaced = timer?.task
        timer = Timer(generation: lastGeneration, task: nil)
        timerTasks += 1
        return .arm(generation: lastGeneration, deadline: deadline(for: first.element.permits), cancelling: replaced)
    }

    /// Adds the permits accrued up to `now`.
    private mutating func refill(now: Int64) {
        guard now > cycleStart else { return }
        let elapsed = now - cycleStart
        let cycles = elapsed / interval
        // Fewer than `permits`: the rest of the division is below `interval`.
        let due = Int(Self.scale(elapsed % interval, by: Int64(permits), over: interval, roundingUp: false))
        let added: Int
        if cycles == 0 {
            guard due > credited else { return }
            added = due - credited
        } else if cycles > Int64(burst) {
            // At least a permit per cycle: the bucket is full whatever it held.
            fill(now: now)
            return
        } else {
            // The rest of the current cycle, the whole cycles after it, and the start of the last.
            let (whole, overflow) = Int(cycles - 1).multipliedReportingOverflow(by: permits)
            added = overflow ? .max : Self.saturatingSum(permits - credited, whole, due)
        }
        if added >= burst - tokens {
            fill(now: now)
        } else {
            tokens += added
            cycleStart += cycles * interval
            credited = due
        }
    }

    /// The bucket is full: the rest accrued (the fraction of a permit too) is lost, and the next
    /// cycle starts now.
    private mutating func fill(now: Int64) {
        tokens = burst
        cycleStart = max(cycleStart, now)
        credited = 0
    }

    /// When the bucket will hold `count` permits (more than it holds now), in nanoseconds since
    /// the limiter was made; the largest `Int64` if that is beyond it.
    private func deadline(for count: Int) -> Int64 {
        // The m-th permit of the cycle accrues at ⌈m × interval / permits⌉: `q` whole cycles, then
        // the s-th permit of the next.
        let m = Int64(credited) + Int64(count - tokens)
        let (q, s) = m.quotientAndRemainder(dividingBy: Int64(permits))
        let (whole, overflow) = q.multipliedReportingOverflow(by: interval)
        guard !overflow else { return .max }
        let part = Self.scale(s, by: interval, over: Int64(permits), roundingUp: true)
        let (offset, overflowAgain) = whole.addingReportingOverflow(part)
        guard !overflowAgain else { return .max }
        let (deadline, overflowAtLast) = cycleStart.addingReportingOverflow(offset)
        return overflowAtLast ? .max : deadline
    }

    /// `value × factor ÷ divisor`, rounded down or up, computed at double width: for
    /// non-negative arguments whose result fits (here always below `factor` or `divisor`).
    private static func scale(_ value: Int64, by factor: Int64, over divisor: Int64, roundingUp: Bool) -> Int64 {
        let (quotient, remainder) = divisor.dividingFullWidth(value.multipliedFullWidth(by: factor))
        return roundingUp && remainder > 0 ? quotient + 1 : quotient
    }

    private static func saturatingSum(_ values: Int...) -> Int {
        values.reduce(0) { sum, value in
            let (total, overflow) = sum.addingReportingOverflow(value)
            return overflow ? .max : total
        }
    }
}
