import Atomics
import Testing

@testable import BatonLocks

/// The stages of an `AsyncLock` waiter, driven directly: the windows between finding the lock
/// held and queuing, and between a handover and the waiter's resumption, that racing tasks hit
/// only sometimes.
@Suite("AsyncLock's state machine", .timeLimit(.minutes(1)))
struct AsyncLockStateMachineTests {
    /// Two task handles' bits (any distinct even values: the machine only stores and compares
    /// them).
    let holder = AsyncLockStateMachine.Owner(task: UnsafeMutableRawPointer(bitPattern: 0x1000)!)
    let other = AsyncLockStateMachine.Owner(task: UnsafeMutableRawPointer(bitPattern: 0x2000)!)
    let priority = AsyncLockStateMachine.Priority(rawValue: TaskPriority.medium.rawValue)

    typealias Continuation = UnsafeContinuation<Void, Never>

    /// A lock word held by `holder`, and a machine on it; the caller destroys the word.
    private func heldLock() -> (AsyncLockWord, Locked<AsyncLockStateMachine>) {
        let word = AsyncLockWord()
        #expect(word.tryTake(holder.taskBits))
        return (word, Locked(AsyncLockStateMachine(word: word)))
    }

    /// Queues `waiter` from a suspended task; `afterwards` runs with what the machine said, under
    /// the same lock, and returns the continuation to resume (the machine's `.resumeNow`, or one
    /// a later transition gave back), so that the task always ends.
    private func enqueue(
        _ waiter: AsyncLockWaiter, in machine: Locked<AsyncLockStateMachine>,
        then afterwards: (AsyncLockStateMachine.Enqueue, inout AsyncLockStateMachine) -> Continuation?
    ) async {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            let resume = machine.withValue { machine -> Continuation? in
                let enqueue = machine.enqueue(waiter, continuation)
                return afterwards(enqueue, &machine)
            }
            resume?.resume()
        }
    }

    /// Waiters of high, low, medium, high and medium priority queue (so a priority is inserted
    /// before, between and after the others, and two are counted twice), then leave one by one:
    /// the highest is always the highest of those still waiting.
    @Test("The waiters' priorities: the highest is the highest still waiting, however they come and go")
    func priorityCounts() {
        func priority(_ value: TaskPriority) -> AsyncLockStateMachine.Priority { .init(rawValue: value.rawValue) }
        var counts = PriorityCounts()
        #expect(counts.highest == nil)
        for value in [TaskPriority.high, .low, .medium, .high, .medium] { counts.add(priority(value)) }
        var highest: [UInt8?] = [counts.highest?.rawValue]
        for value in [TaskPriority.high, .high, .background, .medium, .medium, .low] {
            counts.remove(priority(value))  // .background never waited: nothing changes
            highest.append(counts.highest?.rawValue)
        }
        let (high, medium, low) = (TaskPriority.high.rawValue, TaskPriority.medium.rawValue, TaskPriority.low.rawValue)
        #expect(highest == [high, high, medium, medium, medium, low, nil])
    }

    @Test("A waiter withdrawn before it queues is resumed at once, without the lock, and never queues")
    func withdrawnWhileArriving() async {
        let (word, machine) = heldLock()
        defer { word.destroy() }
        let waiter = AsyncLockWaiter(owner: other, priority: priority)
        // Its cancellation handler (or timer) runs between `acquire` and `enqueue`.
        #expect(machine.withValue { $0.cancel(waiter) } == nil)
        await enqueue(waiter, in: machine) { enqueue, machine in
            switch enqueue {
            case .resumeNow(let continuation):
                return continuation
            case .wait:
                // Queued despite the withdrawal: take it out so the test ends, and fail below.
                Issue.record("a withdrawn waiter queued")
                return machine.cancel(waiter)
            }
        }
        #expect(machine.withValue { $0.takeOutcome(waiter) } == false)
        #expect(machine.withValue { $0.waitingCount } == 0)
        // The holder releases: no waiter is handed the lock.
        if case .handOver = machine.withValue({ $0.release() }) { Issue.record("the lock went to a withdrawn waiter") }
        #expect(word.holder == 0)
    }

    @Test("A waiter handed the lock stays its holder when its cancellation or timer comes late")
    func lateWithdrawalKeepsTheHandover() async {
        let (word, machine) = heldLock()
        defer { word.destroy() }
        let waiter = AsyncLockWaiter(owner: other, priority: priority)
        await enqueue(waiter, in: machine) { enqueue, machine in
            guard case .wait = enqueue else {
                Issue.record("a waiter of a held lock did not queue")
                return nil
            }
            // The holder releases: the waiter is handed the lock and resumed.
            guard case .handOver(let continuation, _) = machine.release() else {
                Issue.record("the release did not hand the lock over")
                return machine.cancel(waiter)
            }
            return continuation
        }
        #expect(word.holder == other.taskBits)
        // Its cancellation handler runs after the handover: nothing to resume, the lock kept.
        #expect(machine.withValue { $0.cancel(waiter) } == nil)
        #expect(machine.withValue { $0.takeOutcome(waiter) })
    }

    @Test("A recycled waiter is a new waiter: its owner, priority and stage are the new task's")
    func recycledWaiterStartsAfresh() async {
        let (word, machine) = heldLock()
        defer { word.destroy() }
        let waiter = AsyncLockWaiter(owner: other, priority: priority)
        await enqueue(waiter, in: machine) { _, machine in
            guard case .handOver(let continuation, _) = machine.release() else { return machine.cancel(waiter) }
            return continuation
        }
        // `other` holds the lock; the node goes to the next waiter, the first holder, whose
        // cancellation comes before it queues.
        let high = AsyncLockStateMachine.Priority(rawValue: TaskPriority.high.rawValue)
        waiter.reuse(owner: holder, priority: high)
        #expect(waiter.owner.taskBits == holder.taskBits)
        #expect(waiter.priority.rawValue == high.rawValue)
        #expect(machine.withValue { $0.cancel(waiter) } == nil)
        await enqueue(waiter, in: machine) { enqueue, machine in
            switch enqueue {
            case .resumeNow(let continuation): return continuation
            case .wait:
                Issue.record("a recycled waiter kept its last stage and queued despite its withdrawal")
                return machine.cancel(waiter)
            }
        }
        #expect(machine.withValue { $0.takeOutcome(waiter) } == false)
        #expect(word.holder == other.taskBits)
    }

    @Test("A waiter withdrawn twice, by its cancellation and its timer, leaves once: the one behind it keeps its place")
    func withdrawnTwiceLeavesOnce() async {
        let (word, machine) = heldLock()
        defer { word.destroy() }
        let first = AsyncLockWaiter(owner: other, priority: priority)
        let second = AsyncLockWaiter(
            owner: AsyncLockStateMachine.Owner(task: UnsafeMutableRawPointer(bitPattern: 0x3000)!), priority: priority)
        let firstWait = Task { await enqueue(first, in: machine) { _, _ in nil } }
        while machine.withValue({ $0.waitingCount }) < 1 { await Task.yield() }
        let secondWait = Task { await enqueue(second, in: machine) { _, _ in nil } }
        while machine.withValue({ $0.waitingCount }) < 2 { await Task.yield() }

        // Its cancellation handler takes the first out; then its timer fires, and finds it gone.
        machine.withValue { $0.cancel(first) }?.resume()
        await firstWait.value
        #expect(machine.withValue { $0.cancel(first) } == nil)
        #expect(machine.withValue { $0.waitingCount } == 1)

        // The holder releases: the second is handed the lock.
        switch machine.withValue({ $0.release() }) {
        case .handOver(let continuation, _):
            continuation.resume()
        case .free:
            Issue.record("the waiter behind the withdrawn one was lost")
            machine.withValue { $0.cancel(second) }?.resume()
        }
        await secondWait.value
        #expect(machine.withValue { $0.takeOutcome(second) })
        #expect(word.holder == second.owner.taskBits)
    }

    @Test(
        "A contended lock keeps the node of a finished wait, timed or not; every wait ends once, and the lock is freed",
        arguments: [false, true])
    func contendedLockKeepsASpareNode(timed: Bool) async throws {
        weak var freed: AsyncLock?
        do {
            let lock = AsyncLock()
            freed = lock
            let counter = Guarded(0)  // guarded by `lock`
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        for _ in 0..<100 {
                            let section = {
                                let read = counter.value
                                await Task.yield()
                                counter.value = read + 1
                            }
                            if timed {
                                try await lock.withLock(timeout: .seconds(60), section)
                            } else {
                                try await lock.withLock(section)
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await lock.withLock { counter.value } == 400)
            #expect(lock.spareWaiter.load(ordering: .acquiring) != nil)
            #expect(!lock.isHeld && lock.waitingCount == 0)
        }
        // The spare node, once a timer, does not keep its lock.
        #expect(freed == nil)
    }
}
