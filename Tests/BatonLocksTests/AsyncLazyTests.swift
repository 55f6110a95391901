import Foundation
import Testing

@testable import BatonLocks

@Suite("AsyncLazy", .timeLimit(.minutes(1)))
struct AsyncLazyTests {
    final class Token: Sendable {}

    @Test("20 concurrent first readers share one slow initialisation and all get its value", arguments: 1...3)
    func singleFlight(round: Int) async throws {
        let runs = Locked(0)
        let lazy = AsyncLazy<Token> {
            runs.withValue { $0 += 1 }
            try await Task.sleep(for: .milliseconds(20))
            return Token()
        }
        let tokens = try await withThrowingTaskGroup(of: ObjectIdentifier.self) { group in
            for _ in 0..<20 { group.addTask { ObjectIdentifier(try await lazy.value) } }
            var tokens: [ObjectIdentifier] = []
            for try await token in group { tokens.append(token) }
            return tokens
        }
        #expect(tokens.count == 20 && Set(tokens).count == 1)
        #expect(runs.get() == 1)
        #expect(lazy.isInitialized)
        #expect(ObjectIdentifier(try await lazy.value) == tokens.first)
        #expect(runs.get() == 1)
    }

    @Test("A failed attempt gives its error to the readers that waited for it; the next read tries again")
    func failureIsRetried() async throws {
        let attempts = Locked(0)
        let gate = Gate()
        let lazy = AsyncLazy<Int> {
            let attempt = attempts.withValue {
                $0 += 1
                return $0
            }
            if attempt == 1 {
                await gate.wait()
                throw TestError.boom
            }
            return 10 * attempt
        }
        let leader = Task { try await lazy.value }
        #expect(await waitUntil { attempts.get() == 1 })
        let waiters = (0..<3).map { _ in Task { try await lazy.value } }
        #expect(await waitUntil { lazy.waitingCount == 3 })
        gate.open()
        await #expect(throws: TestError.boom) { try await leader.value }
        for waiter in waiters { await #expect(throws: TestError.boom) { try await waiter.value } }
        #expect(!lazy.isInitialized)
        #expect(try await lazy.value == 20)
        #expect(try await lazy.value == 20)
        #expect(attempts.get() == 2)
    }

    @Test("A cancelled leader's CancellationError does not reach the waiters: one of them runs the initializer again")
    func cancelledLeaderHandsOver() async throws {
        let attempts = Locked(0)
        let lazy = firstAttemptSleeps(counting: attempts)
        let leader = Task { try await lazy.value }
        #expect(await waitUntil { attempts.get() == 1 })
        let waiters = (0..<3).map { _ in Task { try await lazy.value } }
        #expect(await waitUntil { lazy.waitingCount == 3 })
        leader.cancel()
        await #expect(throws: CancellationError.self) { try await leader.value }
        for waiter in waiters { #expect(try await waiter.value == 2) }
        #expect(attempts.get() == 2)
        #expect(lazy.isInitialized)
    }

    /// The first waiter, chosen to run the initializer after the leader was cancelled, is itself
    /// cancelled between its wake-up and its running (held there by its executor): it leaves with
    /// `CancellationError` without running the initializer, and passes the turn to the next
    /// waiter, which computes the value.
    @Test("A waiter cancelled as it is chosen to run the initializer again passes the turn on and leaves")
    func waiterCancelledAsItIsChosenPassesTheTurnOn() async throws {
        let attempts = Locked(0)
        let lazy = firstAttemptSleeps(counting: attempts)
        let held = HoldingExecutor()
        let leader = Task { try await lazy.value }
        #expect(await waitUntil { attempts.get() == 1 })
        let chosen = Task(executorPreference: held) { try await lazy.value }
        #expect(await waitUntil { held.queuedCount == 1 })
        held.runQueued()  // `chosen` reads, queues first and suspends
        #expect(lazy.waitingCount == 1)
        let next = Task { try await lazy.value }
        #expect(await waitUntil { lazy.waitingCount == 2 })
        leader.cancel()
        await #expect(throws: CancellationError.self) { try await leader.value }
        // The leader's failure chose `chosen`: resumed, out of the queue, and held.
        #expect(await waitUntil { held.queuedCount == 1 })
        #expect(lazy.waitingCount == 1)
        chosen.cancel()
        held.runQueued()
        await #expect(throws: CancellationError.self) { try await chosen.value }
        #expect(try await next.value == 2)
        #expect(attempts.get() == 2)
        #expect(lazy.isInitialized)
    }

    @Test("A leader cancelled with no one waiting leaves the value to be computed by the next read")
    func cancelledLeaderAlone() async throws {
        let attempts = Locked(0)
        let lazy = firstAttemptSleeps(counting: attempts)
        let leader = Task { try await lazy.value }
        #expect(await waitUntil { attempts.get() == 1 })
        leader.cancel()
        await #expect(throws: CancellationError.self) { try await leader.value }
        #expect(try await lazy.value == 2)
    }

    @Test("A waiter cancelled while it waits leaves at once; the initializer and the other waiters go on")
    func cancelledWaiterLeaves() async throws {
        let attempts = Locked(0)
        let gate = Gate()
        let lazy = AsyncLazy<Int> {
            attempts.withValue { $0 += 1 }
            await gate.wait()
            return 5
        }
        let leader = Task { try await lazy.value }
        #expect(await waitUntil { attempts.get() == 1 })
        let leaving = Task { try await lazy.value }
        #expect(await waitUntil { lazy.waitingCount == 1 })
        let staying = Task { try await lazy.value }
        #expect(await waitUntil { lazy.waitingCount == 2 })
        leaving.cancel()
        // At once: the initializer is still waiting at the gate.
        await #expect(throws: CancellationError.self) { try await leaving.value }
        #expect(lazy.waitingCount == 1 && !lazy.isInitialized)
        gate.open()
        #expect(try await leader.value == 5)
        #expect(try await staying.value == 5)
        #expect(attempts.get() == 1)
    }

    @Test("A reader cancelled before the value exists throws at once and starts nothing; once it exists, it reads it")
    func alreadyCancelledReader() async throws {
        let attempts = Locked(0)
        let lazy = AsyncLazy<Int> {
            attempts.withValue { $0 += 1 }
            return 3
        }
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await lazy.value
        }
        await #expect(throws: CancellationError.self) { try await early.value }
        #expect(attempts.get() == 0)
        #expect(try await lazy.value == 3)
        let late = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await lazy.value
        }
        #expect(try await late.value == 3)
        #expect(attempts.get() == 1)
    }

    @Test("A waiter of high priority raises the task running the initializer to its priority")
    func donatesPriority() async throws {
        let gate = Gate()
        let priorities = Locked<[TaskPriority]>([])
        let lazy = AsyncLazy<Int> {
            priorities.withValue { $0.append(Task.currentPriority) }
            await gate.wait()
            priorities.withValue { $0.append(Task.currentPriority) }
            return 1
        }
        let leader = Task(priority: .background) { try await lazy.value }
        #expect(await waitUntil { priorities.withValue { $0.count == 1 } })
        let waiter = Task(priority: .high) { try await lazy.value }
        #expect(await waitUntil { lazy.waitingCount == 1 })
        gate.open()
        #expect(try await leader.value == 1)
        #expect(try await waiter.value == 1)
        #expect(priorities.get() == [.background, .high])
    }

    /// The leader is cancelled and the first waiter runs the initializer again: a waiter of high
    /// priority that comes after raises that new leader, not the one that left.
    @Test("After a cancelled leader hands over, a waiter of high priority raises the new leader")
    func donatesPriorityToTheNextLeader() async throws {
        let attempts = Locked(0)
        let gate = Gate()
        let priorities = Locked<[TaskPriority]>([])
        let lazy = AsyncLazy<Int> {
            let attempt = attempts.withValue {
                $0 += 1
                return $0
            }
            if attempt == 1 { try await Task.sleep(for: .seconds(100)) }
            priorities.withValue { $0.append(Task.currentPriority) }
            await gate.wait()
            priorities.withValue { $0.append(Task.currentPriority) }
            return attempt
        }
        let leader = Task(priority: .background) { try await lazy.value }
        #expect(await waitUntil { attempts.get() == 1 })
        let next = Task(priority: .background) { try await lazy.value }
        #expect(await waitUntil { lazy.waitingCount == 1 })
        leader.cancel()
        await #expect(throws: CancellationError.self) { try await leader.value }
        #expect(await waitUntil { priorities.withValue { $0.count == 1 } })
        let urgent = Task(priority: .high) { try await lazy.value }
        #expect(await waitUntil { lazy.waitingCount == 1 })
        gate.open()
        #expect(try await next.value == 2)
        #expect(try await urgent.value == 2)
        #expect(priorities.get() == [.background, .high])
    }

    @Test("Reading an AsyncLazy from inside its own initializer stops with a message naming it")
    func readInsideItsInitializerStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            exitSuccessfullyIfStillRunning()
            let box = Locked<AsyncLazy<Int>?>(nil)
            let lazy = AsyncLazy(name: "model") { try await box.get()!.value + 1 }
            box.set(lazy)
            _ = try? await lazy.value
        }
        let text = standardError(of: result)
        #expect(text.contains("AsyncLazy<Int> \"model\" (created at BatonLocksTests/AsyncLazyTests.swift:"))
        #expect(text.contains("value read from inside its own initializer"))
    }
}

/// A lazy value whose initializer counts its attempts in `attempts` and returns the attempt's
/// number; the first attempt sleeps for 100 s first, until its task is cancelled.
private func firstAttemptSleeps(counting attempts: Locked<Int>) -> AsyncLazy<Int> {
    AsyncLazy {
        let attempt = attempts.withValue {
            $0 += 1
            return $0
        }
        if attempt == 1 { try await Task.sleep(for: .seconds(100)) }
        return attempt
    }
}
