import Foundation
import Testing

@testable import BatonLocks

@Suite("AsyncLock", .timeLimit(.minutes(1)))
struct AsyncLockTests {
    @Test("16 tasks × 50 read-await-write sections lose no update, and no two are ever inside", arguments: 1...3)
    func excludesAcrossAwaits(round: Int) async throws {
        let lock = AsyncLock()
        let counter = Guarded(0)  // guarded by `lock`
        let inside = Locked((now: 0, most: 0))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<16 {
                group.addTask {
                    for _ in 0..<50 {
                        try await lock.withLock {
                            inside.withValue {
                                $0.now += 1
                                $0.most = max($0.most, $0.now)
                            }
                            let read = counter.value
                            await Task.yield()
                            counter.value = read + 1
                            inside.withValue { $0.now -= 1 }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await lock.withLock { counter.value } == 800)
        #expect(inside.get().most == 1)
        #expect(!lock.isHeld && lock.waitingCount == 0)
    }

    @Test("Waiters take the lock in the order they asked for it")
    func fifo() async throws {
        let lock = AsyncLock()
        let gate = Gate()
        let order = Locked<[Int]>([])
        let holder = Task { try await lock.withLock { await gate.wait() } }
        #expect(await waitUntil { lock.isHeld })
        var tasks: [Task<Void, any Error>] = []
        for index in 0..<10 {
            tasks.append(Task { try await lock.withLock { order.withValue { $0.append(index) } } })
            #expect(await waitUntil { lock.waitingCount == index + 1 })
        }
        gate.open()
        try await holder.value
        for task in tasks { try await task.value }
        // Each section appends before it releases, so the log is the order of the handoffs.
        #expect(order.get() == Array(0..<10))
    }

    @Test("A release hands the lock to each waiter in turn, whether the holder took it free or was handed it")
    func releaseHandsOverToEachWaiter() async throws {
        let lock = AsyncLock()
        let gate = Gate()
        let order = Locked<[Int]>([])
        // Takes the lock free, with no waiter: its release must still see the waiters that came.
        let holder = Task { try await lock.withLock { await gate.wait() } }
        #expect(await waitUntil { lock.isHeld })
        var waiters: [Task<Void, any Error>] = []
        for index in 0..<3 {
            waiters.append(Task { try await lock.withLock { order.withValue { $0.append(index) } } })
            #expect(await waitUntil { lock.waitingCount == index + 1 })
        }
        gate.open()
        try await holder.value
        // Bounded: a release that freed the lock instead of handing it over strands the waiters.
        #expect(await waitUntil { order.withValue { $0.count == 3 } })
        #expect(order.get() == [0, 1, 2])
        for waiter in waiters { waiter.cancel() }
        for waiter in waiters { _ = await waiter.result }
        #expect(!lock.isHeld && lock.waitingCount == 0)
    }

    @Test("A task cancelled before it calls withLock throws at once; the body does not run")
    func cancelledBeforeWithLock() async {
        let lock = AsyncLock()
        let ran = Locked(false)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await WaitOutcome { try await lock.withLock { ran.set(true) } }
        }
        #expect(await task.value == .cancelled)
        #expect(!ran.get())
        #expect(!lock.isHeld)
    }

    @Test("A waiter cancelled while it waits throws promptly and never runs its body; the holder is undisturbed")
    func cancelledWhileWaiting() async throws {
        let lock = AsyncLock()
        let gate = Gate()
        let ran = Locked(false)
        let holder = Task { try await lock.withLock { await gate.wait() } }
        #expect(await waitUntil { lock.isHeld })
        let waiter = Task { await WaitOutcome { try await lock.withLock { ran.set(true) } } }
        #expect(await waitUntil { lock.waitingCount == 1 })
        waiter.cancel()
        // Promptly: while the holder still holds the lock.
        #expect(await waiter.value == .cancelled)
        #expect(lock.isHeld && lock.waitingCount == 0)
        gate.open()
        try await holder.value
        #expect(!ran.get())
        #expect(!lock.isHeld)
        #expect(try await lock.withLock { 7 } == 7)
    }

    @Test("Waiters cancelled at the front, middle and back leave the queue; the rest take the lock in order")
    func cancelledAnywhereInTheQueue() async throws {
        let lock = AsyncLock()
        let gate = Gate()
        let order = Locked<[Int]>([])
        let holder = Task { try await lock.withLock { await gate.wait() } }
        #expect(await waitUntil { lock.isHeld })
        var waiters: [Task<WaitOutcome, Never>] = []
        for index in 0..<7 {
            waiters.append(
                Task { await WaitOutcome { try await lock.withLock { order.withValue { $0.append(index) } } } })
            #expect(await waitUntil { lock.waitingCount == index + 1 })
        }
        // The middle first, then its new neighbour, then the front and the back.
        for (count, index) in [3, 4, 0, 6].enumerated() {
            waiters[index].cancel()
            #expect(await waiters[index].value == .cancelled)
            #expect(lock.waitingCount == 7 - count - 1)
        }
        // A waiter that queues after the cancellations goes behind the others.
        waiters.append(Task { await WaitOutcome { try await lock.withLock { order.withValue { $0.append(7) } } } })
        #expect(await waitUntil { lock.waitingCount == 4 })
        gate.open()
        try await holder.value
        // Bounded: a waiter lost from the list would never be handed the lock.
        #expect(await waitUntil { order.withValue { $0.count } == 4 })
        #expect(order.get() == [1, 2, 5, 7])
        // A waiter that ran its body is not touched by a late cancellation; one lost from the
        // list would be ended by it here, and show as cancelled.
        for waiter in waiters { waiter.cancel() }
        for index in [1, 2, 5, 7] { #expect(await waiters[index].value == .ranBody) }
        #expect(!lock.isHeld && lock.waitingCount == 0)
    }

    @Test("The lock handed to a waiter that is cancelled before it runs goes on to the next waiter")
    func handedLockPassesOn() async throws {
        let lock = AsyncLock()
        let gate = Gate()
        let order = Locked<[String]>([])
        let holder = Task { try await lock.withLock { await gate.wait() } }
        #expect(await waitUntil { lock.isHeld })
        let executor = HoldableExecutor()
        let first = Task(executorPreference: executor) {
            await WaitOutcome { try await lock.withLock { order.withValue { $0.append("first") } } }
        }
        #expect(await waitUntil { lock.waitingCount == 1 })
        let second = Task { try await lock.withLock { order.withValue { $0.append("second") } } }
        #expect(await waitUntil { lock.waitingCount == 2 })
        // The holder releases and hands the lock to the first waiter, which is then cancelled
        // before it can run: when it runs it must pass the lock on.
        let letGo = executor.hold()
        gate.open()
        try await holder.value
        #expect(lock.isHeld && lock.waitingCount == 1)
        first.cancel()
        letGo()
        #expect(await first.value == .cancelled)
        // Bounded: were the lock lost, the second waiter would wait forever.
        #expect(await waitUntil { order.withValue { $0 == ["second"] } })
        second.cancel()
        _ = await second.result
        #expect(order.get() == ["second"])
        #expect(!lock.isHeld && lock.waitingCount == 0)
    }

    @Test("Cancelled at the moment of the handoff: the lock is used or passed on, never lost", arguments: 1...4)
    func cancelledAtTheHandoff(round: Int) async throws {
        let lock = AsyncLock()
        for _ in 0..<100 {
            let gate = Gate()
            let holder = Task { try await lock.withLock { await gate.wait() } }
            #expect(await waitUntil { lock.isHeld })
            let waiter = Task { await WaitOutcome { try await lock.withLock { await Task.yield() } } }
            #expect(await waitUntil { lock.waitingCount == 1 })
            // The release and the cancellation race from two threads.
            let opener = Thread { gate.open() }
            opener.start()
            waiter.cancel()
            let outcome = await waiter.value
            #expect(outcome == .ranBody || outcome == .cancelled)
            try await holder.value
            #expect(await waitUntil { !lock.isHeld })
            #expect(lock.waitingCount == 0)
        }
        #expect(try await lock.withLock { true })
    }

    @Test("A storm of random cancellations leaves the lock free, with exact counts of the sections that ran")
    func cancellationStorm() async throws {
        let lock = AsyncLock()
        let counter = Guarded(0)  // guarded by `lock`
        let ran = Locked(0)
        let tasks = (0..<200).map { _ in
            Task {
                await WaitOutcome {
                    try await lock.withLock {
                        let read = counter.value
                        await Task.yield()
                        counter.value = read + 1
                    }
                    ran.withValue { $0 += 1 }
                }
            }
        }
        for task in tasks.shuffled().prefix(100) {
            task.cancel()
            await Task.yield()
        }
        var outcomes: [WaitOutcome] = []
        for task in tasks { outcomes.append(await task.value) }
        #expect(outcomes.allSatisfy { $0 == .ranBody || $0 == .cancelled })
        #expect(try await lock.withLock { counter.value } == ran.get())
        #expect(outcomes.count { $0 == .ranBody } == ran.get())
        #expect(!lock.isHeld && lock.waitingCount == 0)
    }

    @Test("withLock inside its own body, in the same task, throws a re-entry error naming the lock and both sites")
    func reentryThrows() async throws {
        let lock = AsyncLock(name: "catalog")
        let outerLine = #line + 2
        do {
            try await lock.withLock {
                try await lock.withLock { () -> Void in Issue.record("the inner section ran") }
            }
            Issue.record("withLock returned instead of throwing")
        } catch let error as AsyncLockError {
            #expect(error.code == .reentry)
            #expect(error.lock.name == "catalog" && error.lock.kind == .asyncLock)
            #expect(error.firstTakenAt == SourceSite(fileID: #fileID, line: outerLine))
            #expect(error.takenAt == SourceSite(fileID: #fileID, line: outerLine + 1))
            #expect(error.description.contains("AsyncLock \"catalog\""))
            #expect(error.description.contains("already holds it"))
        }
        // The outer section released the lock when the error went through it.
        #expect(!lock.isHeld)
        #expect(try await lock.withLock { 1 } == 1)
    }

    @Test("A different task taking a held lock waits: that is not a re-entry")
    func otherTaskIsNotReentry() async throws {
        let lock = AsyncLock()
        let value = try await lock.withLock {
            let other = Task { try await lock.withLock { 5 } }
            #expect(await waitUntil { lock.waitingCount == 1 })
            return other
        }
        #expect(try await value.value == 5)
    }

    /// A background task takes `lock` and holds it; a waiter of high priority comes: the
    /// holder must run at high priority from then on, which it reads inside its section.
    private func expectTheHolderIsRaised(
        _ lock: AsyncLock, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let gate = Gate()
        let priorities = Locked<[TaskPriority]>([])
        let holder = Task(priority: .background) {
            try await lock.withLock {
                priorities.withValue { $0.append(Task.currentPriority) }
                await gate.wait()
                priorities.withValue { $0.append(Task.currentPriority) }
            }
        }
        #expect(await waitUntil { priorities.withValue { $0.count == 1 } }, sourceLocation: sourceLocation)
        let waiter = Task(priority: .high) { try await lock.withLock {} }
        #expect(await waitUntil { lock.waitingCount == 1 }, sourceLocation: sourceLocation)
        gate.open()
        try await holder.value
        try await waiter.value
        #expect(priorities.get() == [.background, .high], sourceLocation: sourceLocation)
    }

    @Test("A waiter of high priority raises the holder's task to its priority")
    func donatesPriority() async throws {
        let lock = AsyncLock()
        try await expectTheHolderIsRaised(lock)
    }

    /// Donation at a handover, not only when a waiter arrives: the lock goes to the first
    /// waiter (background), and the high-priority waiter behind it raises that new holder before
    /// it runs.
    @Test("A lock handed to the next waiter raises it to the priority of a waiter still behind it")
    func donatesAtTheHandover() async throws {
        let lock = AsyncLock()
        let holderGate = Gate()
        let holder = Task(priority: .background) { try await lock.withLock { await holderGate.wait() } }
        #expect(await waitUntil { lock.isHeld })
        let nextGate = Gate()
        let priorities = Locked<[TaskPriority]>([])
        let next = Task(priority: .background) {
            try await lock.withLock {
                priorities.withValue { $0.append(Task.currentPriority) }
                await nextGate.wait()
            }
        }
        #expect(await waitUntil { lock.waitingCount == 1 })
        let high = Task(priority: .high) { try await lock.withLock {} }
        #expect(await waitUntil { lock.waitingCount == 2 })
        holderGate.open()
        try await holder.value
        #expect(await waitUntil { priorities.withValue { $0.count == 1 } })
        nextGate.open()
        try await next.value
        try await high.value
        #expect(priorities.get() == [.high])
    }

    /// The high-priority waiter is handed the lock and so leaves the queue: its priority must
    /// leave the waiters' priorities with it. When it hands the lock on to the background waiter
    /// behind it, with one more background waiter behind that, the new holder is raised to the
    /// highest priority still waiting (background), not to the one that left.
    @Test("A waiter handed the lock takes its priority out of the queue: the next holder is not raised for it")
    func aHandedWaiterTakesItsPriorityAlong() async throws {
        let lock = AsyncLock()
        let gate = Gate()
        let holder = Task(priority: .background) { try await lock.withLock { await gate.wait() } }
        #expect(await waitUntil { lock.isHeld })
        let high = Task(priority: .high) { try await lock.withLock {} }
        #expect(await waitUntil { lock.waitingCount == 1 })
        let priorities = Locked<[TaskPriority]>([])
        let second = Task(priority: .background) {
            try await lock.withLock { priorities.withValue { $0.append(Task.currentPriority) } }
        }
        #expect(await waitUntil { lock.waitingCount == 2 })
        let third = Task(priority: .background) { try await lock.withLock {} }
        #expect(await waitUntil { lock.waitingCount == 3 })
        gate.open()
        // Before any task is awaited: awaiting one raises it to this test's priority.
        #expect(await waitUntil { priorities.withValue { $0.count == 1 } })
        #expect(priorities.get() == [.background])
        for task in [holder, high, second, third] { try await task.value }
    }

    @Test("A waiter raises a holder that took the lock free after the lock was handed to a task of high priority")
    func donatesAfterAHandoff() async throws {
        let lock = AsyncLock()
        // A handoff to a high-priority waiter, which then releases with no one behind it.
        let firstGate = Gate()
        let first = Task(priority: .background) { try await lock.withLock { await firstGate.wait() } }
        #expect(await waitUntil { lock.isHeld })
        let high = Task(priority: .high) { try await lock.withLock {} }
        #expect(await waitUntil { lock.waitingCount == 1 })
        firstGate.open()
        try await first.value
        try await high.value
        // A background task takes the free lock; what the lock knew of the last holder's
        // priority must not stop the next waiter's donation.
        try await expectTheHolderIsRaised(lock)
    }

    /// As above, where the lock is freed, not handed over: its only waiter (high) was cancelled,
    /// so the holder releases through the mutex with no one to hand the lock to. What the lock
    /// knew of that holder's priority must go with it.
    @Test("A waiter raises a holder that took the lock free after its last waiter was cancelled")
    func donatesAfterTheLastWaiterLeft() async throws {
        let lock = AsyncLock()
        let firstGate = Gate()
        let first = Task(priority: .background) { try await lock.withLock { await firstGate.wait() } }
        #expect(await waitUntil { lock.isHeld })
        let cancelled = Task(priority: .high) { try await lock.withLock {} }
        #expect(await waitUntil { lock.waitingCount == 1 })
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        firstGate.open()
        try await first.value
        try await expectTheHolderIsRaised(lock)
    }

    @Test("The lock is released when the body throws, and the error comes out unchanged")
    func releasesOnThrow() async {
        let lock = AsyncLock()
        await #expect(throws: TestError.boom) { try await lock.withLock { throw TestError.boom } }
        #expect(!lock.isHeld)
    }

    @Test("Called from an actor, the section runs on the actor and excludes other calls across its await")
    func inheritsTheCallersIsolation() async throws {
        let store = TokenStore()
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<12 { group.addTask { try await store.token() } }
            var tokens: Set<Int> = []
            for try await token in group { tokens.insert(token) }
            #expect(tokens == [1])
        }
        #expect(await store.fetches == 1)
    }
}

/// The check-await-update pattern on an actor: without the lock every caller arriving during the
/// fetch would fetch too.
private actor TokenStore {
    private let refreshing = AsyncLock()
    private var cached: Int?
    private(set) var fetches = 0

    func token() async throws -> Int {
        try await refreshing.withLock {
            if let cached { return cached }
            try await Task.sleep(for: .milliseconds(5))
            fetches += 1
            cached = fetches
            return fetches
        }
    }
}

@Suite("AsyncProtected", .timeLimit(.minutes(1)))
struct AsyncProtectedTests {
    @Test("Read, await, write sections on the state lose no update")
    func excludes() async throws {
        let protected = AsyncProtected([String: Int]())
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<8 {
                group.addTask {
                    for _ in 0..<40 {
                        try await protected.withLock { state in
                            let read = state["total", default: 0]
                            await Task.yield()
                            state["total"] = read + 1
                            state["task \(index)", default: 0] += 1
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let state = try await protected.withLock { $0 }
        #expect(state["total"] == 320)
        #expect((0..<8).allSatisfy { state["task \($0)"] == 40 })
    }

    @Test("Changes made before a throw are kept; re-entry throws AsyncLockError naming the value's lock")
    func throwsAndReentry() async throws {
        let protected = AsyncProtected(0, name: "tally")
        await #expect(throws: TestError.boom) {
            try await protected.withLock { value in
                value = 3
                throw TestError.boom
            }
        }
        #expect(try await protected.withLock { $0 } == 3)
        do {
            try await protected.withLock { _ in try await protected.withLock { _ in } }
            Issue.record("re-entry did not throw")
        } catch let error as AsyncLockError {
            #expect(error.code == .reentry && error.lock.name == "tally")
        }
    }
}
