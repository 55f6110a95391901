import Atomics
import BatonLocks
import BatonTesting

/// The `AsyncLock` stress run: tasks update a two-field counter in critical sections that await
/// between the two writes, while a canceller cancels tasks at random moments.
///
/// Each round has a burst, unrecorded, in which no two tasks may ever be inside at once and
/// every reader (inside the lock, after an await) must see both fields equal; then, with every
/// task finished, an exact count (each section that ran added one; a cancelled task's section
/// never runs); then a recorded phase whose history of increments and reads must be
/// linearizable against a counter starting at the exact count.
enum AsyncLockStress {
    /// The counter: both fields change in one section, with an await between them.
    final class Counter: @unchecked Sendable {  // `lock` guards `first` and `second`
        let lock = AsyncLock(name: "stress.async-lock")
        var first = 0
        var second = 0

        func increment() async throws -> Int {
            try await lock.withLock {
                first += 1
                await Task.yield()
                second += 1
                return first
            }
        }

        func read() async throws -> (first: Int, second: Int) {
            try await lock.withLock {
                let first = first
                await Task.yield()
                return (first, second)
            }
        }
    }

    static func run(_ options: StressOptions) -> StressResult {
        let session = StressSession(name: "async-lock", options: options)
        let tasks = options.threads * 2
        let perTask = max(1, options.roundOperations / tasks)
        let counter = Counter()
        var expected = 0
        var round = 0
        while session.shouldContinue {
            round += 1
            let currentRound = round
            let burst = session.task("async-lock round \(round) burst") {
                await burstRound(counter, tasks: tasks, sections: perTask * 4, session: session, round: currentRound)
            }
            guard let burst else { break }
            session.countOperations(burst.operations)
            expected += burst.increments
            guard let fields = session.task("async-lock round \(round) count", { try? await counter.read() }),
                let fields
            else { break }
            guard fields.first == expected && fields.second == expected else {
                session.violations.report(
                    "round \(round): \(expected) increments made, but the counter holds first = \(fields.first), "
                        + "second = \(fields.second)")
                break
            }

            let clock = LogicalClock()
            let logs = session.task("async-lock round \(round) recorded") {
                await recordedPhase(counter, clock: clock, tasks: tasks, operations: perTask)
            }
            guard let logs else { break }
            let history = logs.flatMap { $0 }
            session.countOperations(history.count)
            let checker = LinearizabilityChecker(model: CounterModel(initialValue: expected))
            session.record(checker.check(history), round: round)
            expected += history.count { $0.input == .increment }
        }
        return session.result()
    }

    private static func burstRound(
        _ counter: Counter, tasks: Int, sections: Int, session: StressSession, round: Int
    ) async -> (operations: Int, increments: Int) {
        let inside = ManagedAtomic<Int>(0)
        let handles = (0..<tasks).map { _ in
            Task {
                var random = SeededGenerator.fresh()
                var operations = 0
                var increments = 0
                for _ in 0..<sections {
                    do {
                        if random.chance(60) {
                            try await counter.lock.withLock {
                                if inside.wrappingIncrementThenLoad(ordering: .relaxed) != 1 {
                                    session.violations.report("round \(round): two tasks inside the AsyncLock at once")
                                }
                                counter.first += 1
                                await Task.yield()
                                counter.second += 1
                                inside.wrappingDecrement(ordering: .relaxed)
                            }
                            increments += 1
                        } else {
                            let fields = try await counter.read()
                            if fields.first != fields.second {
                                session.violations.report(
                                    "round \(round): a reader saw a half-done section: first = \(fields.first), "
                                        + "second = \(fields.second)")
                            }
                        }
                        operations += 1
                    } catch {
                        break
                    }
                }
                return (operations: operations, increments: increments)
            }
        }
        var random = SeededGenerator.fresh()
        for handle in handles where random.chance(25) {
            for _ in 0..<Int.random(in: 0...3, using: &random) { await Task.yield() }
            handle.cancel()
        }
        var total = (operations: 0, increments: 0)
        for handle in handles {
            let counts = await handle.value
            total.operations += counts.operations
            total.increments += counts.increments
        }
        return total
    }

    private static func recordedPhase(
        _ counter: Counter, clock: LogicalClock, tasks: Int, operations: Int
    ) async -> [[HistoryEntry<CounterModel.Operation, Int>]] {
        await withTaskGroup(of: [HistoryEntry<CounterModel.Operation, Int>].self) { group in
            for thread in 0..<tasks {
                group.addTask {
                    var random = SeededGenerator.fresh()
                    var entries: [HistoryEntry<CounterModel.Operation, Int>] = []
                    for _ in 0..<operations {
                        let input: CounterModel.Operation = random.chance(50) ? .increment : .read
                        let invocation = clock.tick()
                        // Not cancelled: these tasks always get the lock.
                        let output =
                            input == .increment
                            ? (try? await counter.increment()) ?? -1 : (try? await counter.read().first) ?? -1
                        entries.append(
                            HistoryEntry(
                                input: input, output: output, invocation: invocation, response: clock.tick(),
                                thread: thread))
                    }
                    return entries
                }
            }
            var logs: [[HistoryEntry<CounterModel.Operation, Int>]] = []
            for await log in group { logs.append(log) }
            return logs
        }
    }
}
