import Atomics
import Foundation
import Testing

@testable import BatonLocks

@Suite("AsyncSemaphore", .timeLimit(.minutes(1)))
struct AsyncSemaphoreTests {
    @Test("Width 3, 24 tasks that await inside: never more than 3 inside, and 3 reached", arguments: 1...3)
    func widthIsNeverExceededAndIsReached(round: Int) async throws {
        let semaphore = AsyncSemaphore(value: 3)
        let inside = Locked((now: 0, most: 0, finished: 0))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<24 {
                group.addTask {
                    try await semaphore.withPermit {
                        inside.withValue {
                            $0.now += 1
                            $0.most = max($0.most, $0.now)
                        }
                        try await Task.sleep(for: .milliseconds(2))
                        inside.withValue { $0.now -= 1 }
                    }
                    inside.withValue { $0.finished += 1 }
                }
            }
            try await group.waitForAll()
        }
        let counts = inside.get()
        #expect(counts.most == 3)
        #expect(counts.now == 0 && counts.finished == 24)
        #expect(semaphore.freePermits == 3 && semaphore.waitingCount == 0)
    }

    @Test("Waiters get permits in the order they arrived")
    func fifo() async throws {
        let semaphore = AsyncSemaphore(value: 0)
        let order = Locked<[Int]>([])
        var tasks: [Task<Void, any Error>] = []
        for index in 0..<10 {
            tasks.append(
                Task {
                    try await semaphore.wait()
                    order.withValue { $0.append(index) }
                })
            // The next waiter starts only once this one is queued: arrival order is the index.
            #expect(await waitUntil { semaphore.waitingCount == index + 1 })
        }
        for handed in 1...10 {
            #expect(semaphore.signal())
            #expect(await waitUntil { order.withValue { $0.count == handed } })
        }
        #expect(order.get() == Array(0..<10))
        for task in tasks { try await task.value }
        #expect(semaphore.freePermits == 0)
    }

    @Test("A task arriving while others wait queues behind them, even when the permit is just released")
    func newcomerDoesNotJumpTheQueue() async throws {
        let semaphore = AsyncSemaphore(value: 1)
        try await semaphore.wait()
        let order = Locked<[String]>([])
        // The first waiter runs on an executor the test holds still, so that, handed the
        // permit, it cannot use it and give it back before the newcomer arrives.
        let executor = HoldableExecutor()
        let first = Task(executorPreference: executor) {
            try await semaphore.withPermit { order.withValue { $0.append("first") } }
        }
        #expect(await waitUntil { semaphore.waitingCount == 1 })
        let letGo = executor.hold()
        // Handed straight to the waiter: nothing is left free for a newcomer to take.
        #expect(semaphore.signal())
        #expect(semaphore.freePermits == 0 && semaphore.waitingCount == 0)
        let newcomer = Task {
            try await semaphore.withPermit { order.withValue { $0.append("newcomer") } }
        }
        #expect(await waitUntil { semaphore.waitingCount == 1 })
        #expect(order.get() == [])
        letGo()
        try await first.value
        try await newcomer.value
        #expect(order.get() == ["first", "newcomer"])
        #expect(semaphore.freePermits == 1 && semaphore.waitingCount == 0)
    }

    @Test("A signal on its way to a waiter cancelled meanwhile still hands it the permit, which it passes on")
    func signalInFlightToACancelledWaiter() async throws {
        let semaphore = AsyncSemaphore(value: 0)
        let first = Task { await WaitOutcome { try await semaphore.wait() } }
        #expect(await waitUntil { semaphore.waitingCount == 1 })
        // The first half of a signal: the count says the permit is owed to the waiter. The
        // other half, handing it over under the mutex, comes after the cancellation.
        #expect(semaphore.count.loadThenWrappingIncrement(ordering: .acquiringAndReleasing) == -1)
        first.cancel()
        // The permit is the waiter's, not free: nobody may take it meanwhile (had the waiter
        // withdrawn, a newcomer queued now would be handed this same permit a second time).
        #expect(!semaphore.tryTakeFreePermit())
        #expect(semaphore.freePermits == 0 && semaphore.waitingCount == 1)
        #expect(semaphore.resumeFirstWaiter())
        #expect(await first.value == .cancelled)
        // Passed on, and with no one waiting, kept: exactly one permit, and a second wait waits.
        #expect(semaphore.freePermits == 1 && semaphore.waitingCount == 0)
        #expect(semaphore.tryTakeFreePermit())
        let second = Task { await WaitOutcome { try await semaphore.wait() } }
        #expect(await waitUntil { semaphore.waitingCount == 1 })
        second.cancel()
        #expect(await second.value == .cancelled)
        #expect(semaphore.freePermits == 0 && semaphore.waitingCount == 0)
    }

    /// The timed wait's twin of the test above: its own slow path must pass the permit on too.
    @Test("A timed waiter handed a permit as it is cancelled passes the permit on")
    func signalInFlightToACancelledTimedWaiter() async throws {
        let semaphore = AsyncSemaphore(value: 0)
        let first = Task { await WaitOutcome { try await semaphore.wait(timeout: .seconds(60)) } }
        #expect(await waitUntil { semaphore.waitingCount == 1 })
        #expect(semaphore.count.loadThenWrappingIncrement(ordering: .acquiringAndReleasing) == -1)
        first.cancel()
        #expect(semaphore.resumeFirstWaiter())
        #expect(await first.value == .cancelled)
        #expect(semaphore.freePermits == 1 && semaphore.waitingCount == 0)
    }

    @Test("A task cancelled before it calls wait throws at once and takes nothing")
    func cancelledBeforeWait() async {
        let semaphore = AsyncSemaphore(value: 1)
        let ran = Locked(false)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await WaitOutcome { try await semaphore.withPermit { ran.set(true) } }
        }
        #expect(await task.value == .cancelled)
        #expect(!ran.get())
        #expect(semaphore.freePermits == 1)
    }

    @Test("A waiter cancelled while it waits throws promptly, runs no body, and leaves the count as it was")
    func cancelledWhileWaiting() async {
        let semaphore = AsyncSemaphore(value: 0)
        let ran = Locked(false)
        let task = Task { await WaitOutcome { try await semaphore.withPermit { ran.set(true) } } }
        #expect(await waitUntil { semaphore.waitingCount == 1 })
        task.cancel()
        #expect(await task.value == .cancelled)
        #expect(!ran.get())
        #expect(semaphore.waitingCount == 0)
        // The cancelled waiter is gone: a signal finds no one and the permit stays free.
        #expect(!semaphore.signal())
        #expect(semaphore.freePermits == 1)
    }

    @Test("Cancelled at the moment of the handoff: the permit is used and returned, or passed on", arguments: 1...4)
    func cancelledAtTheHandoff(round: Int) async {
        let semaphore = AsyncSemaphore(value: 0)
        var outcomes: [WaitOutcome: Int] = [:]
        for _ in 0..<150 {
            let task = Task { await WaitOutcome { try await semaphore.withPermit { await Task.yield() } } }
            #expect(await waitUntil { semaphore.waitingCount == 1 })
            // The signal and the cancellation race from two threads.
            let signaller = Thread { semaphore.signal() }
            signaller.start()
            task.cancel()
            outcomes[await task.value, default: 0] += 1
            #expect(await waitUntil { semaphore.freePermits == 1 })
            #expect(semaphore.waitingCount == 0)
            // Take the permit back for the next round.
            await #expect(throws: Never.self) { try await semaphore.wait() }
        }
        #expect(outcomes.keys.allSatisfy { $0 == .ranBody || $0 == .cancelled })
        #expect(semaphore.freePermits == 0)
    }

    @Test("A permit handed to a waiter that is cancelled before it runs goes on to the next waiter")
    func handedPermitPassesOn() async throws {
        let semaphore = AsyncSemaphore(value: 0)
        let order = Locked<[String]>([])
        let executor = HoldableExecutor()
        let first = Task(executorPreference: executor) {
            await WaitOutcome { try await semaphore.withPermit { order.withValue { $0.append("first") } } }
        }
        #expect(await waitUntil { semaphore.waitingCount == 1 })
        let second = Task { try await semaphore.withPermit { order.withValue { $0.append("second") } } }
        #expect(await waitUntil { semaphore.waitingCount == 2 })
        // The first waiter is handed the permit, then cancelled before it can run: when it runs
        // it must pass the permit on.
        let letGo = executor.hold()
        #expect(semaphore.signal())
        #expect(semaphore.waitingCount == 1)
        first.cancel()
        letGo()
        #expect(await first.value == .cancelled)
        // Bounded: were the permit lost, the second waiter would wait forever.
        #expect(await waitUntil { order.withValue { $0 == ["second"] } })
        second.cancel()
        _ = await second.result
        #expect(order.get() == ["second"])
        #expect(semaphore.freePermits == 1 && semaphore.waitingCount == 0)
    }

    @Test(
        "A storm of random cancellations: never more than the width inside, and every permit accounted for",
        arguments: 1...3)
    func cancellationStorm(round: Int) async {
        let width = 4
        let semaphore = AsyncSemaphore(value: width)
        let inside = Locked((now: 0, most: 0))
        let tasks = (0..<300).map { _ in
            Task {
                await WaitOutcome {
                    for _ in 0..<5 {
                        try await semaphore.withPermit {
                            inside.withValue {
                                $0.now += 1
                                $0.most = max($0.most, $0.now)
                            }
                            await Task.yield()
                            inside.withValue { $0.now -= 1 }
                        }
                    }
                }
            }
        }
        var random = SystemRandomNumberGenerator()
        for task in tasks.shuffled(using: &random).prefix(150) {
            task.cancel()
            if Bool.random(using: &random) { await Task.yield() }
        }
        var cancelled = 0
        for task in tasks {
            switch await task.value {
            case .cancelled: cancelled += 1
            case .ranBody: break
            case .otherError(let error): Issue.record("unexpected error \(error)")
            }
        }
        #expect(cancelled <= 150)
        #expect(inside.get().most <= width && inside.get().now == 0)
        #expect(semaphore.freePermits == width)
        #expect(semaphore.waitingCount == 0)
        // Exactly `width` permits: that many waits return at once, and the next one waits.
        for _ in 0..<width { await #expect(throws: Never.self) { try await semaphore.wait() } }
        let extra = Task { try await semaphore.wait() }
        #expect(await waitUntil { semaphore.waitingCount == 1 })
        extra.cancel()
        await #expect(throws: CancellationError.self) { try await extra.value }
    }

    @Test("signal() past the initial value adds permits; it returns true only when it resumed a waiter")
    func countingSignals() async throws {
        let semaphore = AsyncSemaphore(value: 0)
        #expect(!semaphore.signal())
        #expect(!semaphore.signal())
        #expect(semaphore.freePermits == 2)
        try await semaphore.wait()
        try await semaphore.wait()
        #expect(semaphore.freePermits == 0)
        let waiter = Task { try await semaphore.wait() }
        #expect(await waitUntil { semaphore.waitingCount == 1 })
        #expect(semaphore.signal())
        try await waiter.value
        #expect(semaphore.freePermits == 0)
    }

    @Test("withPermit returns the permit when its body throws, and rethrows the error")
    func withPermitReturnsThePermitOnThrow() async {
        let semaphore = AsyncSemaphore(value: 1)
        await #expect(throws: TestError.boom) {
            try await semaphore.withPermit { throw TestError.boom }
        }
        #expect(semaphore.freePermits == 1)
    }

    @Test("1,000 waiting tasks hold no threads: the pool keeps running other work, and all resume")
    func waitersHoldNoThreads() async throws {
        let semaphore = AsyncSemaphore(value: 0)
        let threadsBefore = processThreadCount()
        let resumed = Locked(0)
        let tasks = (0..<1_000).map { _ in
            Task {
                try await semaphore.wait()
                resumed.withValue { $0 += 1 }
            }
        }
        #expect(await waitUntil { semaphore.waitingCount == 1_000 })
        // Were the waiters blocking threads, the pool (one thread per core) would be stuck and
        // this task would never run.
        let other = Task.detached { (1...100).reduce(0, +) }
        #expect(await other.value == 5_050)
        // Nor does any waiter get a thread of its own (tests running beside this one may start
        // a few dozen threads; a thread per waiter would be a thousand).
        if let threadsBefore, let threadsNow = processThreadCount() {
            #expect(threadsNow < threadsBefore + 500)
        }
        for _ in 0..<1_000 { semaphore.signal() }
        for task in tasks { try await task.value }
        #expect(resumed.get() == 1_000)
        #expect(semaphore.freePermits == 0 && semaphore.waitingCount == 0)
    }

    @Test("Called from an actor, withPermit runs its body on the actor without losing its isolation")
    func inheritsTheCallersIsolation() async throws {
        let counter = PermitCounter()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<20 { group.addTask { try await counter.increment() } }
            try await group.waitForAll()
        }
        #expect(await counter.value == 20)
        #expect(await counter.mostInside == 1)
    }

    @Test("AsyncSemaphore(value: -1) stops, with a message in a debug build")
    func negativeValueStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = AsyncSemaphore(value: -1)
        }
        #if DEBUG
        // An optimised precondition stops without its message.
        #expect(standardError(of: result).contains("the initial value must not be negative (got -1)"))
        #endif
        _ = result
    }
}

/// An actor whose critical section suspends: with a permit of width 1 the increments never
/// interleave, though the actor alone would let them.
private actor PermitCounter {
    private let permit = AsyncSemaphore(value: 1)
    private(set) var value = 0
    private(set) var mostInside = 0
    private var inside = 0

    func increment() async throws {
        try await permit.withPermit {
            inside += 1
            mostInside = max(mostInside, inside)
            let read = value
            try await Task.sleep(for: .microseconds(100))
            value = read + 1
            inside -= 1
        }
    }
}
