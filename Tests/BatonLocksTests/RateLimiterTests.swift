import BatonTesting
import Clocks
import Foundation
import Testing

@testable import BatonLocks

// Every test runs on a `TestClock` (one through `SleepRecordingClock`) and advances it; none
// sleeps for time to pass. Clock advances end between two permits' instants, never on one: a
// timer that goes to sleep on the test clock until exactly its current time would wait for the
// next advance. The tests of the exact instant are the exception, and safe: there `tryAcquire`
// reads the bucket with no timer, or the timer wakes on its deadline and needs no second sleep.

@Suite("RateLimiter", .timeLimit(.minutes(1)))
struct RateLimiterTests {
    /// Starts a task that waits for `count` permits and records `name` once granted; returns
    /// when it waits.
    func queue(
        _ name: String, _ count: Int, on limiter: RateLimiter, into order: Locked<[String]>
    ) async -> Task<Void, any Error> {
        let before = limiter.waitingCount
        let task = Task {
            try await limiter.acquire(count)
            order.withValue { $0.append(name) }
        }
        #expect(await waitUntil { limiter.waitingCount == before + 1 }, "\(name) waits")
        return task
    }

    /// Waits until at most `count` tasks wait, then checks that exactly `count` do: a limiter
    /// that grants too much fails at once rather than at the wait's bound.
    func expectWaiting(
        _ count: Int, on limiter: RateLimiter, sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        #expect(await waitUntil { limiter.waitingCount <= count }, sourceLocation: sourceLocation)
        #expect(limiter.waitingCount == count, sourceLocation: sourceLocation)
    }

    /// Waits until the task queued as `name` is served; if it never is, cancels it, so that the
    /// test fails by name instead of hanging.
    func expectServed(
        _ name: String, _ task: Task<Void, any Error>, order: Locked<[String]>,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        let served = await waitUntil { order.get().contains(name) }
        #expect(served, "\(name) is served", sourceLocation: sourceLocation)
        if !served { task.cancel() }
        _ = await task.result
    }

    /// A waiter whose task runs on an executor the test holds still: granted its permits, it
    /// cannot return before the test cancels it, and then gives them back.
    struct HeldWaiter {
        let task: Task<Void, any Error>
        let letGo: @Sendable () -> Void

        /// Cancels the task and lets it run: it ends cancelled, having given back what it was
        /// granted.
        func cancel(sourceLocation: SourceLocation = #_sourceLocation) async {
            task.cancel()
            letGo()
            #expect(await WaitOutcome { try await task.value } == .cancelled, sourceLocation: sourceLocation)
        }
    }

    /// Starts a ``HeldWaiter`` for `count` permits; returns when it waits.
    func queueHeld(_ count: Int, on limiter: RateLimiter) async -> HeldWaiter {
        let before = limiter.waitingCount
        let executor = HoldableExecutor()
        let task = Task(executorPreference: executor) { try await limiter.acquire(count) }
        #expect(await waitUntil { limiter.waitingCount == before + 1 })
        return HeldWaiter(task: task, letGo: executor.hold())
    }

    @Test("The bucket starts full: the burst is granted at once, then the next waits for its permit")
    func burstThenWait() async throws {
        let clock = TestClock()
        let limiter = RateLimiter(permits: 5, per: .seconds(1), burst: 3, clock: clock)
        for _ in 0..<3 { #expect(limiter.tryAcquire()) }
        #expect(!limiter.tryAcquire())
        let order = Locked<[String]>([])
        let next = await queue("next", 1, on: limiter, into: order)
        #expect(limiter.isTimerArmed)
        // One permit every 200 ms.
        await clock.advance(by: .milliseconds(150))
        await expectWaiting(1, on: limiter)
        #expect(order.get() == [])
        await clock.advance(by: .milliseconds(100))
        await expectServed("next", next, order: order)
        #expect(order.get() == ["next"])
        #expect(!limiter.tryAcquire())
    }

    @Test("acquire takes from a full bucket at once, without a timer")
    func acquireFromAFullBucket() async throws {
        let limiter = RateLimiter(permits: 2, per: .seconds(1), clock: TestClock())
        try await limiter.acquire(2)
        #expect(!limiter.tryAcquire())
        #expect(limiter.waitingCount == 0 && !limiter.isTimerArmed && limiter.timerTasks == 0)
    }

    @Test("Advancing the clock grants exactly the permits that accrued, across several intervals")
    func refillGrantsExactly() async throws {
        let clock = TestClock()
        let limiter = RateLimiter(permits: 10, per: .seconds(1), clock: clock)
        #expect(limiter.tryAcquire(10))
        let order = Locked<[String]>([])
        var tasks: [Task<Void, any Error>] = []
        for index in 0..<14 { tasks.append(await queue("\(index)", 1, on: limiter, into: order)) }
        // A permit every 100 ms: at 350 ms three have accrued, at 650 ms six, at 1,250 ms twelve.
        // Waiters granted in the same advance resume together and may record themselves in any
        // order; which ones were granted is exact: the first to queue.
        func expectGranted(_ count: Int, sourceLocation: SourceLocation = #_sourceLocation) async {
            await expectWaiting(14 - count, on: limiter, sourceLocation: sourceLocation)
            #expect(await waitUntil { order.withValue { $0.count } >= count }, sourceLocation: sourceLocation)
            #expect(Set(order.get()) == Set((0..<count).map { "\($0)" }), sourceLocation: sourceLocation)
        }
        await clock.advance(by: .milliseconds(350))
        await expectGranted(3)
        await clock.advance(by: .milliseconds(300))
        await expectGranted(6)
        await clock.advance(by: .milliseconds(600))
        await expectGranted(12)
        await clock.advance(by: .milliseconds(200))
        await expectGranted(14)
        for task in tasks { try await task.value }
        // At 1,450 ms fourteen have accrued and fourteen were granted: none left, and the
        // fraction of the next keeps counting.
        #expect(!limiter.tryAcquire())
        await clock.advance(by: .milliseconds(40))
        #expect(!limiter.tryAcquire())
        await clock.advance(by: .milliseconds(20))
        #expect(limiter.tryAcquire())
        #expect(!limiter.tryAcquire())
    }

    @Test("A full bucket holds at most the burst, however long the clock runs")
    func aFullBucketHoldsTheBurst() async throws {
        let clock = TestClock()
        let limiter = RateLimiter(permits: 3, per: .seconds(1), burst: 4, clock: clock)
        await clock.advance(by: .seconds(100))
        #expect(limiter.tryAcquire(4))
        #expect(!limiter.tryAcquire())
        // Full, the fraction of the next permit is lost too: it accrues from the moment the bucket
        // had room again.
        await clock.advance(by: .milliseconds(340))
        #expect(limiter.tryAcquire())
        #expect(!limiter.tryAcquire())
    }

    @Test("Waiters are served in arrival order: a later small request does not overtake an earlier large one")
    func firstComeFirstServed() async throws {
        let clock = TestClock()
        let limiter = RateLimiter(permits: 5, per: .seconds(1), clock: clock)
        #expect(limiter.tryAcquire(5))
        let order = Locked<[String]>([])
        let large = await queue("large", 4, on: limiter, into: order)
        let small = await queue("small", 1, on: limiter, into: order)
        // One permit every 200 ms. At 250 ms one permit is there: enough for "small", but
        // "large" is first; and tryAcquire does not jump the queue either.
        await clock.advance(by: .milliseconds(250))
        await expectWaiting(2, on: limiter)
        #expect(!limiter.tryAcquire())
        #expect(order.get() == [])
        // At 850 ms four have accrued: "large" is served, "small" waits for the fifth.
        await clock.advance(by: .milliseconds(600))
        await expectWaiting(1, on: limiter)
        await expectServed("large", large, order: order)
        #expect(order.get() == ["large"])
        #expect(!limiter.tryAcquire())
        await clock.advance(by: .milliseconds(200))
        await expectServed("small", small, order: order)
        #expect(order.get() == ["large", "small"])
    }

    @Test("A cancelled waiter takes nothing and leaves at once; the waiter behind it is served")
    func cancelledWaiterTakesNothing() async throws {
        let clock = TestClock()
        let limiter = RateLimiter(permits: 2, per: .seconds(1), clock: clock)
        #expect(limiter.tryAcquire(2))
        let order = Locked<[String]>([])
        let large = await queue("large", 2, on: limiter, into: order)
        let small = await queue("small", 1, on: limiter, into: order)
        // At 600 ms one permit is there: not enough for "large", which blocks "small".
        await clock.advance(by: .milliseconds(600))
        await expectWaiting(2, on: limiter)
        large.cancel()
        // No clock advance: the cancellation alone lets "small" take the permit.
        await expectServed("small", small, order: order)
        #expect(await WaitOutcome { try await large.value } == .cancelled)
        #expect(order.get() == ["small"])
        #expect(limiter.waitingCount == 0 && !limiter.isTimerArmed)
        // "large" took nothing: at 1,100 ms two permits accrued since the start, one went to
        // "small", and the second accrues at 1,000 ms.
        #expect(!limiter.tryAcquire())
        await clock.advance(by: .milliseconds(500))
        #expect(limiter.tryAcquire())
        #expect(!limiter.tryAcquire())
    }

    @Test("A cancelled waiter in the middle of the queue leaves it; those around it keep their turn")
    func cancelledMiddleWaiter() async throws {
        let clock = TestClock()
        let limiter = RateLimiter(permits: 10, per: .seconds(1), burst: 3, clock: clock)
        #expect(limiter.tryAcquire(3))
        let order = Locked<[String]>([])
        let first = await queue("first", 2, on: limiter, into: order)
        let middle = await queue("middle", 3, on: limiter, into: order)
        let last = await queue("last", 1, on: limiter, into: order)
        middle.cancel()
        #expect(await WaitOutcome { try await middle.value } == .cancelled)
        #expect(limiter.waitingCount == 2)
        // A permit every 100 ms: "first" at 200 ms, then "last" at 300 ms.
        await clock.advance(by: .milliseconds(250))
        await expectServed("first", first, order: order)
        await expectWaiting(1, on: limiter)
        await clock.advance(by: .milliseconds(100))
        await expectServed("last", last, order: order)
        #expect(order.get() == ["first", "last"])
    }

    @Test("A task already cancelled throws without taking anything, even from a full bucket")
    func alreadyCancelled() async throws {
        let limiter = RateLimiter(permits: 1, per: .seconds(1), clock: TestClock())
        let outcome = await Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await WaitOutcome { try await limiter.acquire() }
        }.value
        #expect(outcome == .cancelled)
        #expect(limiter.tryAcquire())
    }

    @Test("A waiter granted its permits as it is cancelled gives them back to the bucket, exactly those")
    func grantedThenCancelledGivesBack() async throws {
        let clock = TestClock()
        // A burst above what is given back, so that the permits go back into the bucket one by
        // one rather than filling it.
        let limiter = RateLimiter(permits: 1, per: .seconds(1), burst: 3, clock: clock)
        #expect(limiter.tryAcquire(3))
        let granted = await queueHeld(2, on: limiter)
        await clock.advance(by: .milliseconds(2_500))
        #expect(await waitUntil { limiter.waitingCount == 0 })
        await granted.cancel()
        // Exactly the two permits are back: no more (half of the next one has accrued).
        #expect(limiter.tryAcquire(2))
        #expect(!limiter.tryAcquire(1))
    }

    @Test("Permits given back go to the waiter behind at once, without waiting for the clock")
    func aGiveBackServesTheNextWaiter() async throws {
        let clock = TestClock()
        let limiter = RateLimiter(permits: 1, per: .seconds(1), burst: 3, clock: clock)
        #expect(limiter.tryAcquire(3))
        let granted = await queueHeld(2, on: limiter)
        let order = Locked<[String]>([])
        let next = await queue("next", 2, on: limiter, into: order)
        // The first waiter is granted the two permits of 2 s; the next would wait until 4 s.
        await clock.advance(by: .milliseconds(2_500))
        await expectWaiting(1, on: limiter)
        await granted.cancel()
        // No clock advance: the two permits given back are the next waiter's.
        await expectServed("next", next, order: order)
        #expect(!limiter.tryAcquire(1), "the waiter took exactly the two given back")
        #expect(!limiter.isTimerArmed)
    }

    @Test("While tasks wait one timer is armed; once none waits, no timer task is left")
    func noTimerLeftBehind() async throws {
        let clock = TestClock()
        let limiter = RateLimiter(permits: 4, per: .seconds(1), burst: 2, clock: clock)
        #expect(limiter.tryAcquire(2))
        #expect(!limiter.isTimerArmed && limiter.timerTasks == 0)
        let order = Locked<[String]>([])
        let first = await queue("first", 2, on: limiter, into: order)
        let second = await queue("second", 1, on: limiter, into: order)
        #expect(limiter.isTimerArmed)
        // Cancelling the first waiter re-arms the timer for the second: still one armed.
        first.cancel()
        #expect(await WaitOutcome { try await first.value } == .cancelled)
        #expect(limiter.isTimerArmed)
        #expect(await waitUntil { limiter.timerTasks == 1 })
        // Served by the timer: it ends.
        await clock.advance(by: .milliseconds(300))
        await expectServed("second", second, order: order)
        #expect(await waitUntil { limiter.timerTasks == 0 })
        #expect(!limiter.isTimerArmed)
        // The last waiter cancelled: the timer is disarmed and its task ends.
        let third = await queue("third", 2, on: limiter, into: order)
        #expect(await waitUntil { limiter.timerTasks == 1 })
        third.cancel()
        #expect(await WaitOutcome { try await third.value } == .cancelled)
        #expect(!limiter.isTimerArmed)
        #expect(await waitUntil { limiter.timerTasks == 0 })
        #expect(order.get() == ["second"])
    }

    @Test("Random acquires and clock advances match an exact token bucket, and keep the window bound", arguments: 1...4)
    func matchesTheModelAndTheWindowBound(seed: UInt64) async throws {
        var random = SeededGenerator(seed: seed)
        let permits = Int.random(in: 1...7, using: &random)
        let interval = Duration.milliseconds(Int.random(in: 1...1_000, using: &random))
        let burst = Int.random(in: 1...12, using: &random)
        let clock = TestClock()
        let limiter = RateLimiter(permits: permits, per: interval, burst: burst, clock: clock)
        var model = TokenBucketModel(permits: permits, interval: interval, burst: burst)
        var grants: [(at: Int64, count: Int)] = []
        for step in 0..<400 {
            if Bool.random(using: &random) {
                let nanoseconds = Int64.random(in: 0...(interval.wholeNanosecondsForTests * 2), using: &random)
                await clock.advance(by: .nanoseconds(nanoseconds))
                model.advance(by: nanoseconds)
            } else {
                let count = Int.random(in: 1...burst, using: &random)
                let granted = limiter.tryAcquire(count)
                #expect(granted == model.tryAcquire(count), "step \(step): tryAcquire(\(count))")
                if granted { grants.append((model.now, count)) }
            }
        }
        // Over any window [grants[i], grants[j]], at most burst + permits × window / interval.
        let intervalNanoseconds = interval.wholeNanosecondsForTests
        for i in grants.indices {
            var total = 0
            for j in i..<grants.count {
                total += grants[j].count
                let window = grants[j].at - grants[i].at
                // total ≤ burst + permits × window / interval, multiplied out.
                #expect(
                    Int64(total - burst) * intervalNanoseconds <= Int64(permits) * window,
                    "\(total) granted over \(window) ns")
            }
        }
        #expect(grants.count > 10)
    }

    @Test("A permit is in the bucket at the very nanosecond it accrues, not one before")
    func aPermitAccruesAtItsExactInstant() async throws {
        let clock = TestClock()
        // The m-th permit accrues at ⌈m × 1 s ÷ 3⌉: the first at 333,333,334 ns. (Below the
        // burst throughout: a full bucket would restart the count.)
        let limiter = RateLimiter(permits: 3, per: .seconds(1), burst: 3, clock: clock)
        #expect(limiter.tryAcquire(3))
        await clock.advance(by: .nanoseconds(333_333_333))
        #expect(!limiter.tryAcquire())
        await clock.advance(by: .nanoseconds(1))
        #expect(limiter.tryAcquire())
        // The second at 666,666,667 ns.
        await clock.advance(by: .nanoseconds(333_333_332))
        #expect(!limiter.tryAcquire())
        await clock.advance(by: .nanoseconds(1))
        #expect(limiter.tryAcquire())
    }

    @Test("An interval with a fraction of a nanosecond counts as the next whole nanosecond")
    func aFractionalIntervalIsRoundedUp() async throws {
        let clock = TestClock()
        let interval = Duration.nanoseconds(1) + Duration(secondsComponent: 0, attosecondsComponent: 500_000_000)
        let limiter = RateLimiter(permits: 1, per: interval, burst: 2, clock: clock)
        #expect(limiter.interval == interval)
        #expect(limiter.tryAcquire(2))
        await clock.advance(by: .nanoseconds(1))
        #expect(!limiter.tryAcquire())
        await clock.advance(by: .nanoseconds(1))
        #expect(limiter.tryAcquire(), "a permit every 2 ns")
        await clock.advance(by: .nanoseconds(1))
        #expect(!limiter.tryAcquire())
        await clock.advance(by: .nanoseconds(1))
        #expect(limiter.tryAcquire())
    }

    @Test(
        "The timer sleeps until the nanosecond the first waiter's permits accrue, rounded up",
        arguments: [
            // (permits a second, permits waited for, the instant they are all in the bucket)
            (3, 1, Int64(333_333_334)), (3, 2, 666_666_667), (5, 1, 200_000_000), (5, 3, 600_000_000),
        ])
    func theTimerWakesWhenThePermitsAccrue(permits: Int, count: Int, due: Int64) async throws {
        let clock = SleepRecordingClock()
        let limiter = RateLimiter(permits: permits, per: .seconds(1), burst: count, clock: clock)
        #expect(limiter.tryAcquire(count))
        let order = Locked<[String]>([])
        let waiter = await queue("waiter", count, on: limiter, into: order)
        #expect(await waitUntil { !clock.deadlines.get().isEmpty })
        #expect(clock.deadlines.get() == [.nanoseconds(due)])
        // Woken exactly then, it serves the waiter without sleeping again.
        await clock.base.advance(by: .nanoseconds(due))
        await expectServed("waiter", waiter, order: order)
        #expect(clock.deadlines.get() == [.nanoseconds(due)])
    }

    @Test("A give-back that fills the bucket drops the fraction accrued: the next permit counts from then")
    func aGiveBackThatFillsTheBucketRestartsTheCycle() async throws {
        let clock = TestClock()
        let limiter = RateLimiter(permits: 1, per: .seconds(1), burst: 2, clock: clock)
        #expect(limiter.tryAcquire(2))
        let granted = await queueHeld(1, on: limiter)
        // Granted the permit that accrued at 1 s; the next accrues at 2 s.
        await clock.advance(by: .milliseconds(1_500))
        #expect(await waitUntil { limiter.waitingCount == 0 })
        // At 2.2 s its task is cancelled: the permit of 2 s and the one given back fill the
        // bucket, so the next permit accrues a whole second later, at 3.2 s.
        await clock.advance(by: .milliseconds(700))
        await granted.cancel()
        await clock.advance(by: .milliseconds(700))
        #expect(limiter.tryAcquire(2))
        await clock.advance(by: .milliseconds(200))
        #expect(!limiter.tryAcquire(), "3.1 s: the fraction from 2 s was dropped")
        await clock.advance(by: .milliseconds(200))
        #expect(limiter.tryAcquire(), "3.3 s: a second since the bucket was filled")
    }

    @Test("Sizes outside 1...burst, and bad rates, are precondition failures")
    func badInput() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            try? await RateLimiter(permits: 1, per: .seconds(1), burst: 2, clock: TestClock()).acquire(3)
        }
        #if DEBUG
        // An optimised precondition stops the process without its message.
        #expect(standardError(of: result).contains("3 permits could never be granted: the bucket holds at most 2"))
        #else
        _ = result
        #endif
        await #expect(processExitsWith: .failure) {
            _ = RateLimiter(permits: 1, per: .seconds(1), burst: 2, clock: TestClock()).tryAcquire(3)
        }
        await #expect(processExitsWith: .failure) {
            try? await RateLimiter(permits: 1, per: .seconds(1), clock: TestClock()).acquire(0)
        }
        await #expect(processExitsWith: .failure) {
            _ = RateLimiter(permits: 0, per: .seconds(1))
        }
        await #expect(processExitsWith: .failure) {
            _ = RateLimiter(permits: 1, per: .zero)
        }
        await #expect(processExitsWith: .failure) {
            _ = RateLimiter(permits: 1, per: .seconds(1), burst: 0)
        }
    }
}

/// A token bucket written the plain way, for comparison: the level kept exactly, in units of
/// 1 / interval-in-nanoseconds of a permit, so that it needs no fractions.
struct TokenBucketModel {
    let permits: Int64
    let interval: Int64
    let burst: Int64
    /// Nanoseconds since the start.
    private(set) var now: Int64 = 0
    /// The level × interval: a permit is `interval` units; `permits` units accrue each nanosecond.
    private var level: Int64

    init(permits: Int, interval: Duration, burst: Int) {
        self.permits = Int64(permits)
        self.interval = interval.wholeNanosecondsForTests
        self.burst = Int64(burst)
        level = Int64(burst) * self.interval
    }

    mutating func advance(by nanoseconds: Int64) {
        now += nanoseconds
        level = min(burst * interval, level + permits * nanoseconds)
    }

    mutating func tryAcquire(_ count: Int) -> Bool {
        guard level >= Int64(count) * interval else { return false }
        level -= Int64(count) * interval
        return true
    }
}

extension Duration {
    /// Whole nanoseconds (the tests' durations have no fraction of one).
    var wholeNanosecondsForTests: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}

/// A test clock that records the deadline of every sleep, as a duration since the clock was
/// made, and lets `base` decide when each sleep ends.
struct SleepRecordingClock: Clock {
    let base = TestClock()
    let deadlines = Locked<[Duration]>([])
    let origin: TestClock<Duration>.Instant

    init() { origin = base.now }

    var now: TestClock<Duration>.Instant { base.now }
    var minimumResolution: Duration { base.minimumResolution }

    func sleep(until deadline: TestClock<Duration>.Instant, tolerance: Duration?) async throws {
        deadlines.withValue { $0.append(origin.duration(to: deadline)) }
        try await base.sleep(until: deadline, tolerance: tolerance)
    }
}
