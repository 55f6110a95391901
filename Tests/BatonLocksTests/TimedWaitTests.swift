import BatonTestSupport
import Clocks
import Foundation
import Testing

@testable import BatonLocks

/// How a timed wait ended.
enum TimedOutcome: Hashable, Sendable {
    case returned
    case timedOut
    case cancelled
    case otherError(String)

    init(_ body: () async throws -> Void) async {
        do {
            try await body()
            self = .returned
        } catch is TimeoutError {
            self = .timedOut
        } catch is CancellationError {
            self = .cancelled
        } catch {
            self = .otherError("\(error)")
        }
    }
}

/// Whether no task sleeps on the clock any more (a disarmed timer leaves it asynchronously).
func noSleepers(on clock: TestClock<Duration>) async -> Bool {
    await waitUntilAsync { (try? await clock.checkSuspension()) != nil }
}

extension Task where Failure == Never {
    /// The task's value; if the awaiting test is cancelled (its time limit passed), the task is
    /// cancelled too, so that a wait that never ends fails the test by name instead of hanging it.
    var valueOrCancel: Success {
        get async {
            await withTaskCancellationHandler {
                await value
            } onCancel: {
                cancel()
            }
        }
    }
}

/// `waitUntil` for a condition that must be awaited.
func waitUntilAsync(timeout: Duration = .seconds(10), _ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while await !condition() {
        if ContinuousClock.now >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return true
}

@Suite("AsyncSemaphore timed waits", .timeLimit(.minutes(1)))
struct AsyncSemaphoreTimedWaitTests {
    @Test("A wait that times out throws TimeoutError, leaves the queue, takes nothing, and disarms its timer")
    func timeoutFires() async throws {
        let clock = TestClock()
        let semaphore = AsyncSemaphore(value: 0)
        let waiter = Task {
            await TimedOutcome { try await semaphore.wait(until: clock.now.advanced(by: .seconds(5)), clock: clock) }
        }
        #expect(await waitUntil { semaphore.waitingCount == 1 })
        await clock.advance(by: .seconds(4))
        #expect(semaphore.waitingCount == 1)
        await clock.advance(by: .seconds(1))
        #expect(await waiter.valueOrCancel == .timedOut)
        #expect(semaphore.waitingCount == 0 && semaphore.freePermits == 0)
        // The permit count is exact: one signal makes one free permit, not a debt repaid.
        #expect(semaphore.signal() == false)
        #expect(semaphore.freePermits == 1)
        #expect(await noSleepers(on: clock))
    }

    @Test("A wait handed a permit before its deadline returns, and its timer is disarmed at once")
    func timeoutDoesNotFire() async throws {
        let clock = TestClock()
        let semaphore = AsyncSemaphore(value: 0)
        let waiter = Task {
            await TimedOutcome { try await semaphore.wait(until: clock.now.advanced(by: .seconds(5)), clock: clock) }
        }
        #expect(await waitUntil { semaphore.waitingCount == 1 })
        #expect(semaphore.signal())
        #expect(await waiter.valueOrCancel == .returned)
        // No task is left sleeping on the clock for a wait that has returned.
        #expect(await noSleepers(on: clock))
        await clock.advance(by: .seconds(10))
        #expect(semaphore.freePermits == 0 && semaphore.waitingCount == 0)
    }

    @Test("Waits given a Duration that return in time disarm their timers: none is left in the process's timers")
    func durationWaitsDisarm() async throws {
        let semaphore = AsyncSemaphore(value: 0)
        let before = DeadlineTimers.shared.armedCount
        for _ in 0..<200 {
            let waiter = Task { await TimedOutcome { try await semaphore.wait(timeout: .seconds(600)) } }
            #expect(await waitUntil { semaphore.waitingCount == 1 })
            #expect(semaphore.signal())
            #expect(await waiter.valueOrCancel == .returned)
        }
        // Tests running beside this one may hold a few timers of their own; 200 left armed is this
        // suite's doing.
        #expect(DeadlineTimers.shared.armedCount - before < 100)
    }

    @Test("A free permit is taken even with a past deadline; none free and a past deadline throws at once")
    func pastDeadline() async throws {
        let clock = TestClock()
        let semaphore = AsyncSemaphore(value: 1)
        try await semaphore.wait(until: clock.now, clock: clock)
        #expect(semaphore.freePermits == 0)
        let error = await #expect(throws: TimeoutError.self) {
            try await semaphore.wait(until: clock.now.advanced(by: .seconds(-1)), clock: clock)
        }
        #expect(error?.operation == "AsyncSemaphore.wait")
        #expect(semaphore.waitingCount == 0)
        // A deadline of exactly now has come too: the wait throws without waiting for the clock.
        let atNow = Task { try await semaphore.wait(until: clock.now, clock: clock) }
        await #expect(throws: TimeoutError.self) { try await atNow.value(within: 10) }
        #expect(semaphore.waitingCount == 0)
        await #expect(throws: TimeoutError.self) { try await semaphore.wait(timeout: .zero) }
        await #expect(throws: TimeoutError.self) { try await semaphore.wait(timeout: .seconds(-3)) }
        #expect(semaphore.waitingCount == 0 && semaphore.freePermits == 0)
        semaphore.signal()
        try await semaphore.wait(timeout: .zero)
        #expect(semaphore.freePermits == 0)
    }

    @Test("TimeoutError says what timed out and after how long")
    func errorDescription() async throws {
        let semaphore = AsyncSemaphore(value: 0)
        let error = await #expect(throws: TimeoutError.self) { try await semaphore.wait(timeout: .milliseconds(-250)) }
        #expect(error?.timeout == .milliseconds(-250))
        #expect(error?.description == "AsyncSemaphore.wait timed out after -0.25 seconds")
        let clock = TestClock()
        let onClock = await #expect(throws: TimeoutError.self) {
            try await semaphore.wait(until: clock.now.advanced(by: .seconds(-2)), clock: clock)
        }
        #expect(onClock?.timeout == .seconds(-2))
    }

    @Test("A timed-out waiter in the middle of the queue leaves it; the others are served in order")
    func fifoAroundATimeout() async throws {
        let clock = TestClock()
        let semaphore = AsyncSemaphore(value: 0)
        let order = Locked<[Int]>([])
        var tasks: [Task<TimedOutcome, Never>] = []
        for index in 0..<3 {
            // The middle waiter has the shortest deadline.
            let deadline = clock.now.advanced(by: index == 1 ? .seconds(1) : .seconds(100))
            tasks.append(
                Task {
                    await TimedOutcome {
                        try await semaphore.wait(until: deadline, clock: clock)
                        order.withValue { $0.append(index) }
                    }
                })
            #expect(await waitUntil { semaphore.waitingCount == index + 1 })
        }
        await clock.advance(by: .seconds(1))
        #expect(await tasks[1].valueOrCancel == .timedOut)
        #expect(semaphore.waitingCount == 2)
        // One permit at a time: the first goes to waiter 0, which queued first, while waiter 2 still waits.
        #expect(semaphore.signal())
        #expect(await tasks[0].valueOrCancel == .returned)
        #expect(semaphore.waitingCount == 1)
        #expect(order.get() == [0])
        #expect(semaphore.signal())
        #expect(await tasks[2].valueOrCancel == .returned)
        #expect(order.get() == [0, 2])
        #expect(semaphore.freePermits == 0 && semaphore.waitingCount == 0)
    }

    @Test("A permit handed over as the time runs out is kept: the wait returns and the caller holds it")
    func handoffBeatsTimeout() async throws {
        let clock = TestClock()
        let semaphore = AsyncSemaphore(value: 0)
        let executor = HoldableExecutor()
        let waiter = Task(executorPreference: executor) {
            await TimedOutcome { try await semaphore.wait(until: clock.now.advanced(by: .seconds(1)), clock: clock) }
        }
        #expect(await waitUntil { semaphore.waitingCount == 1 })
        let letGo = executor.hold()
        #expect(semaphore.signal())  // handed over; the waiter cannot run yet
        await clock.advance(by: .seconds(1))  // its timer fires, too late to take it out
        letGo()
        #expect(await waiter.valueOrCancel == .returned)
        #expect(semaphore.freePermits == 0 && semaphore.waitingCount == 0)
        semaphore.signal()
        #expect(semaphore.freePermits == 1)
    }

    @Test("Cancelled while it waits with a deadline: CancellationError, not TimeoutError, and nothing taken")
    func cancellationIsNotATimeout() async throws {
        let clock = TestClock()
        let semaphore = AsyncSemaphore(value: 0)
        let waiter = Task {
            await TimedOutcome { try await semaphore.wait(until: clock.now.advanced(by: .seconds(5)), clock: clock) }
        }
        #expect(await waitUntil { semaphore.waitingCount == 1 })
        waiter.cancel()
        #expect(await waiter.valueOrCancel == .cancelled)
        #expect(semaphore.waitingCount == 0)
        #expect(await noSleepers(on: clock))
        semaphore.signal()
        #expect(semaphore.freePermits == 1)
    }

    @Test("A storm of timeouts racing signals and a width-3 pool: every permit is accounted for", arguments: 1...3)
    func stormKeepsCountsExact(round: Int) async throws {
        let clock = TestClock()
        let semaphore = AsyncSemaphore(value: 3)
        let held = Locked((now: 0, most: 0, acquired: 0, timedOut: 0))
        let waiters = 200
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<waiters {
                group.addTask {
                    let deadline = clock.now.advanced(by: .milliseconds(index % 7))
                    let outcome = await TimedOutcome {
                        try await semaphore.wait(until: deadline, clock: clock)
                        held.withValue {
                            $0.now += 1
                            $0.most = max($0.most, $0.now)
                            $0.acquired += 1
                        }
                        await Task.yield()
                        held.withValue { $0.now -= 1 }
                        semaphore.signal()
                    }
                    switch outcome {
                    case .returned: break
                    case .timedOut: held.withValue { $0.timedOut += 1 }
                    default: Issue.record("unexpected \(outcome)")
                    }
                }
            }
            group.addTask {
                for _ in 0..<40 {
                    await clock.advance(by: .milliseconds(1))
                    await Task.yield()
                }
            }
            try await group.waitForAll()
        }
        let counts = held.get()
        #expect(counts.acquired + counts.timedOut == waiters)
        #expect(counts.most <= 3 && counts.now == 0)
        // Every permit is back, and none was made out of nothing.
        #expect(semaphore.freePermits == 3 && semaphore.waitingCount == 0)
        #expect(await noSleepers(on: clock))
    }

    @Test("wait(timeout:) on the continuous clock: a real short timeout fires and a signal in time wins")
    func continuousClock() async throws {
        let semaphore = AsyncSemaphore(value: 0)
        await #expect(throws: TimeoutError.self) { try await semaphore.wait(timeout: .milliseconds(5)) }
        #expect(semaphore.waitingCount == 0)
        let waiter = Task { await TimedOutcome { try await semaphore.wait(timeout: .seconds(60)) } }
        #expect(await waitUntil { semaphore.waitingCount == 1 })
        #expect(semaphore.signal())
        #expect(await waiter.valueOrCancel == .returned)
        #expect(semaphore.freePermits == 0)
    }
}

@Suite("AsyncLock timed waits", .timeLimit(.minutes(1)))
struct AsyncLockTimedWaitTests {
    @Test("withLock(until:) times out without running its body; the holder keeps the lock")
    func timeoutFires() async throws {
        let clock = TestClock()
        let lock = AsyncLock()
        let (release, holder) = await hold(lock)
        let ran = Locked(false)
        let waiter = Task {
            await TimedOutcome {
                try await lock.withLock(until: clock.now.advanced(by: .seconds(2)), clock: clock) {
                    ran.withValue { $0 = true }
                }
            }
        }
        #expect(await waitUntil { lock.waitingCount == 1 })
        await clock.advance(by: .seconds(2))
        #expect(await waiter.valueOrCancel == .timedOut)
        #expect(ran.get() == false)
        #expect(lock.waitingCount == 0 && lock.isHeld)
        release.open()
        try await holder.value
        #expect(!lock.isHeld)
        #expect(await noSleepers(on: clock))
        // The lock works for everyone afterwards.
        try await lock.withLock(timeout: .zero) { ran.withValue { $0 = true } }
        #expect(ran.get())
    }

    @Test("withLock(until:) handed the lock before its deadline runs its body and disarms its timer")
    func timeoutDoesNotFire() async throws {
        let clock = TestClock()
        let lock = AsyncLock()
        let (release, holder) = await hold(lock)
        let waiter = Task {
            try await lock.withLock(until: clock.now.advanced(by: .seconds(2)), clock: clock) { 42 }
        }
        #expect(await waitUntil { lock.waitingCount == 1 })
        release.open()
        try await holder.value
        #expect(try await waiter.value == 42)
        #expect(await noSleepers(on: clock))
        #expect(!lock.isHeld)
    }

    @Test("A lock handed over as the time runs out is kept: the body runs, and the lock is released after")
    func handoffBeatsTimeout() async throws {
        let clock = TestClock()
        let lock = AsyncLock()
        let (release, holder) = await hold(lock)
        let executor = HoldableExecutor()
        let waiter = Task(executorPreference: executor) {
            await TimedOutcome {
                try await lock.withLock(until: clock.now.advanced(by: .seconds(1)), clock: clock) {}
            }
        }
        #expect(await waitUntil { lock.waitingCount == 1 })
        let letGo = executor.hold()
        release.open()
        try await holder.value  // handed to the waiter, which cannot run yet
        #expect(lock.isHeld && lock.waitingCount == 0)
        await clock.advance(by: .seconds(1))
        letGo()
        #expect(await waiter.valueOrCancel == .returned)
        #expect(!lock.isHeld)
    }

    @Test("Past deadline: a free lock is taken; a held one throws TimeoutError at once")
    func pastDeadline() async throws {
        let lock = AsyncLock()
        #expect(try await lock.withLock(timeout: .zero) { 1 } == 1)
        let (release, holder) = await hold(lock)
        let error = await #expect(throws: TimeoutError.self) { try await lock.withLock(timeout: .zero) {} }
        #expect(error?.operation == "AsyncLock.withLock")
        #expect(lock.waitingCount == 0)
        release.open()
        try await holder.value
    }

    @Test("Re-entry with a timeout is reported as re-entry, not left to time out")
    func reentry() async throws {
        let lock = AsyncLock(name: "reentered")
        let error = await #expect(throws: AsyncLockError.self) {
            try await lock.withLock {
                try await lock.withLock(timeout: .seconds(60)) {}
            }
        }
        #expect(error?.code == .reentry)
    }

    @Test("withLock(timeout:) on the continuous clock: a real short timeout fires and a handover in time wins")
    func continuousClock() async throws {
        let lock = AsyncLock()
        let (release, holder) = await hold(lock)
        let ran = Locked(false)
        await #expect(throws: TimeoutError.self) {
            try await lock.withLock(timeout: .milliseconds(5)) { ran.withValue { $0 = true } }
        }
        #expect(ran.get() == false)
        #expect(lock.waitingCount == 0 && lock.isHeld)
        let waiter = Task { await TimedOutcome { try await lock.withLock(timeout: .seconds(60)) {} } }
        #expect(await waitUntil { lock.waitingCount == 1 })
        release.open()
        try await holder.value
        #expect(await waiter.valueOrCancel == .returned)
        #expect(!lock.isHeld && lock.waitingCount == 0)
    }

    @Test(
        "Real short timeouts on the continuous clock racing handovers: exact count, never two inside, each ends once",
        arguments: 1...3)
    func continuousClockStorm(round: Int) async throws {
        let lock = AsyncLock()
        try await raceTimedWaiters(on: lock, waiters: 120) { index, section in
            try await lock.withLock(timeout: .microseconds(50 * (index % 7)), section)
        }
        // The lock is whole afterwards: a wait with a timeout takes it.
        #expect(try await lock.withLock(timeout: .seconds(60)) { 1 } == 1)
    }

    @Test(
        "A storm of timed waiters on one lock: exact count, never two inside, every waiter ends once", arguments: 1...3)
    func storm(round: Int) async throws {
        let clock = TestClock()
        let lock = AsyncLock()
        try await raceTimedWaiters(on: lock, waiters: 150) { index, section in
            try await lock.withLock(until: clock.now.advanced(by: .milliseconds(index % 5)), clock: clock, section)
        } beside: {
            for _ in 0..<30 {
                await clock.advance(by: .milliseconds(1))
                await Task.yield()
            }
        }
        #expect(await noSleepers(on: clock))
    }

    /// Starts a task that takes `lock` and holds it until `release` opens; returns once it holds
    /// the lock.
    private func hold(_ lock: AsyncLock) async -> (release: Gate, holder: Task<Void, any Error>) {
        let release = Gate()
        let holding = Gate()
        let holder = Task {
            try await lock.withLock {
                holding.open()
                await release.wait()
            }
        }
        await holding.wait()
        return (release, holder)
    }

    /// Races `waiters` tasks that each take `lock` through `take(index, section)`, the section
    /// yielding inside, with `beside` running alongside (a clock's advances); then checks that
    /// every waiter ran its section or timed out, once, that no two were ever inside, and that
    /// the lock is free with no one waiting.
    private func raceTimedWaiters(
        on lock: AsyncLock, waiters: Int,
        take: @escaping @Sendable (_ index: Int, _ section: @escaping @Sendable () async -> Void) async throws -> Void,
        beside: (@Sendable () async -> Void)? = nil
    ) async throws {
        let state = Locked((inside: 0, most: 0, ran: 0, timedOut: 0))
        let section: @Sendable () async -> Void = {
            state.withValue {
                $0.inside += 1
                $0.most = max($0.most, $0.inside)
                $0.ran += 1
            }
            await Task.yield()
            state.withValue { $0.inside -= 1 }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<waiters {
                group.addTask {
                    switch await TimedOutcome({ try await take(index, section) }) {
                    case .returned: break
                    case .timedOut: state.withValue { $0.timedOut += 1 }
                    case let outcome: Issue.record("unexpected \(outcome)")
                    }
                }
            }
            if let beside { group.addTask { await beside() } }
            try await group.waitForAll()
        }
        let counts = state.get()
        #expect(counts.ran + counts.timedOut == waiters)
        #expect(counts.most == 1 && counts.inside == 0)
        #expect(!lock.isHeld && lock.waitingCount == 0)
    }
}

/// State only the actor may touch, to check that `withTimeout` runs its operation there.
private actor Account {
    var balance = 0

    func deposit(_ amount: Int, within timeout: Duration) async throws -> Int {
        try await withTimeout(timeout) {
            self.assertIsolated()
            balance += amount
            return balance
        }
    }
}

/// Not `Sendable`: `withTimeout` hands it back without asking.
private final class Tally {
    var count = 0
}

@Suite("withTimeout", .timeLimit(.minutes(1)))
struct WithTimeoutTests {
    @Test("An operation that finishes in time returns its value, and its timer is cancelled")
    func finishesInTime() async throws {
        let clock = TestClock()
        let value = try await withTimeout(until: clock.now.advanced(by: .seconds(1)), clock: clock) { 7 }
        #expect(value == 7)
        #expect(await noSleepers(on: clock))
    }

    @Test("Time up: the operation is cancelled, withTimeout waits for it to end, then throws TimeoutError")
    func timesOut() async throws {
        let clock = TestClock()
        let started = Gate()
        let ended = Locked(false)
        let caller = Task {
            await TimedOutcome {
                _ = try await withTimeout(until: clock.now.advanced(by: .seconds(3)), clock: clock) {
                    defer { ended.withValue { $0 = true } }
                    started.open()
                    // Ends only when cancelled.
                    try await Task.sleep(for: .seconds(3600))
                }
            }
        }
        await started.wait()
        await clock.advance(by: .seconds(3))
        let outcome = await caller.valueOrCancel
        #expect(outcome == .timedOut)
        // Structured: by the time withTimeout threw, the operation had ended.
        #expect(ended.get())
    }

    @Test("An operation that ignores cancellation delays the TimeoutError until it ends")
    func ignoredCancellationDelays() async throws {
        let clock = TestClock()
        let started = Gate()
        let finish = Gate()
        let sawCancellation = Locked(false)
        let callerEnded = Locked(false)
        let caller = Task {
            let outcome = await TimedOutcome {
                _ = try await withTimeout(until: clock.now.advanced(by: .seconds(1)), clock: clock) {
                    started.open()
                    while !Task.isCancelled { await Task.yield() }
                    sawCancellation.withValue { $0 = true }
                    await finish.wait()  // carries on regardless
                    return 1
                }
            }
            callerEnded.withValue { $0 = true }
            return outcome
        }
        await started.wait()
        await clock.advance(by: .seconds(1))
        #expect(await waitUntil { sawCancellation.get() })
        // Cancelled, but still running: withTimeout has not returned.
        #expect(callerEnded.get() == false)
        finish.open()
        #expect(await caller.valueOrCancel == .timedOut)
    }

    @Test("The operation's error is rethrown as it is")
    func operationErrorIsRethrown() async throws {
        struct Refused: Error {}
        await #expect(throws: Refused.self) { try await withTimeout(.seconds(60)) { throw Refused() } }
    }

    @Test("The calling task cancelled: CancellationError, not TimeoutError")
    func callerCancelled() async throws {
        let started = Gate()
        let caller = Task {
            await TimedOutcome {
                _ = try await withTimeout(.seconds(3600)) {
                    started.open()
                    try await Task.sleep(for: .seconds(3600))
                }
            }
        }
        await started.wait()
        caller.cancel()
        #expect(await caller.valueOrCancel == .cancelled)
    }

    @Test("The operation runs on the caller's actor, and a non-Sendable result comes back")
    func isolation() async throws {
        let account = Account()
        #expect(try await account.deposit(5, within: .seconds(60)) == 5)
        #expect(try await account.deposit(5, within: .seconds(60)) == 10)
        let tally = try await withTimeout(.seconds(60)) {
            let tally = Tally()
            tally.count = 3
            return tally
        }
        #expect(tally.count == 3)
    }
}
