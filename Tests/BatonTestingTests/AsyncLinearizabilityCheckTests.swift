import BatonLocks
import BatonTesting
import Testing

/// A get-or-load cache's specification: the first `value(key)` loads the next version (loads
/// are numbered across keys from 1), every later one returns what that load returned.
struct LoadOnceSpec: SequentialModel, Sendable {
    struct State: Hashable {
        var cached: [String: Int] = [:]
        var loads = 0
    }
    var initialState: State { State() }
    func step(_ state: State, _ key: String, _ output: Int) -> State? {
        if let cached = state.cached[key] { return output == cached ? state : nil }
        guard output == state.loads + 1 else { return nil }
        var next = state
        next.loads += 1
        next.cached[key] = output
        return next
    }
    func describe(_ key: String, _ output: Int) -> String { "value(\"\(key)\") → \(output)" }
}

/// Numbers its loads; each load suspends first, as a network call would.
final class NumberingLoader: Sendable {
    private let loads = Protected(0)

    func load(_ key: String) async -> Int {
        await Task.yield()
        return loads.write {
            $0 += 1
            return $0
        }
    }
}

/// Check, await, update: two calls for one key both miss, both load.
actor ReentrantCache {
    private var values: [String: Int] = [:]
    private let loader = NumberingLoader()

    func value(_ key: String) async -> Int {
        if let value = values[key] { return value }
        let value = await loader.load(key)
        values[key] = value
        return value
    }
}

/// The same cache with the whole get-or-load under an `AsyncLock`.
final class LockedCache: Sendable {
    private let lock = AsyncLock()
    private let values = Protected<[String: Int]>([:])
    private let loader = NumberingLoader()

    func value(_ key: String) async -> Int {
        try! await lock.withLock {
            if let value = values.read({ $0[key] }) { return value }
            let value = await loader.load(key)
            values.write { $0[key] = value }
            return value
        }
    }
}

/// Records the order in which its operations ran, to compare schedules.
final class OrderLog: Sendable {
    let order = Protected<[String]>([])

    func step(_ name: String) async -> Int? {
        order.write { $0.append(name + "+") }
        await Task.yield()
        order.write { $0.append(name + "-") }
        return nil
    }
}

/// Accepts every history: for checks that look at how the rounds ran, not at the object.
struct AnythingGoes: NondeterministicModel, Sendable {
    var initialState: Int { 0 }
    func successors(of state: Int, _ input: String, _ output: Int?) -> Set<Int> { [0] }
}

@Suite(.timeLimit(.minutes(1))) struct AsyncLinearizabilityCheckTests {
    static func reentrant(scheduling: CheckScheduling = .deterministic)
        -> AsyncLinearizabilityCheck<ReentrantCache, String, Int>
    {
        AsyncLinearizabilityCheck(
            model: LoadOnceSpec(), scheduling: scheduling, operations: ["a", "b"], make: { ReentrantCache() }
        ) { cache, key in
            await cache.value(key)
        }
    }

    static func locked(scheduling: CheckScheduling = .deterministic)
        -> AsyncLinearizabilityCheck<LockedCache, String, Int>
    {
        AsyncLinearizabilityCheck(
            model: LoadOnceSpec(), scheduling: scheduling, operations: ["a", "b"], make: { LockedCache() }
        ) { cache, key in
            await cache.value(key)
        }
    }

    @Test func theDeterministicSchedulerFindsActorReentrancy() async throws {
        let report = try await Self.reentrant().run(seed: 1)
        #expect(report.outcome == .notLinearizable, "\(report)")
        // Two loads of one key: two operations on it, each with its own number.
        #expect(report.operations.count == 2, "\(report)")
        #expect(Set(report.operations.map(\.output)).count == 2)
    }

    @Test func aFailingSeedReplaysTheSameInterleavingExactly() async throws {
        let first = try await Self.reentrant().run(seed: 7)
        let seed = try #require(first.failingSeed)
        let replay = try await Self.reentrant().run(seed: seed)
        #expect(replay.outcome == .notLinearizable)
        #expect(replay.rounds == 1)
        #expect(replay.operations == first.operations)
        #expect(replay.explanation == first.explanation)
    }

    @Test func theSameSeedRunsTheSameScheduleAndOtherSeedsOthers() async throws {
        func order(seed: UInt64) async throws -> [String] {
            let logs = Protected<[OrderLog]>([])
            let check = AsyncLinearizabilityCheck(
                model: AnythingGoes(), tasks: 3, operationsPerTask: 2, operations: ["x"],
                make: {
                    let log = OrderLog()
                    logs.write { $0.append(log) }
                    return log
                }
            ) { log, name in await log.step(name) }
            _ = try await check.run(budget: CheckBudget(rounds: 1, time: .seconds(30)), seed: seed)
            // The last object is the round's; those before it, the sequential runs'.
            return try #require(logs.value.last).order.value
        }
        let orders = try await (0..<16).asyncMap { try await order(seed: $0) }
        #expect(try await order(seed: 3) == orders[3])
        #expect(try await order(seed: 11) == orders[11])
        #expect(Set(orders).count >= 4, "16 seeds ran \(Set(orders).count) schedules")
    }

    @Test func anAsyncLockedCachePasses() async throws {
        let report = try await Self.locked().run(budget: CheckBudget(rounds: 300, time: .seconds(30)))
        #expect(report.passed, "\(report)")
        #expect(report.rounds == 300)
    }

    @Test func theConcurrentSchedulingFindsActorReentrancyToo() async throws {
        let report = try await Self.reentrant(scheduling: .concurrent).run(budget: CheckBudget(time: .seconds(20)))
        #expect(report.outcome == .notLinearizable, "\(report)")
    }

    @Test func theConcurrentSchedulingPassesTheLockedCache() async throws {
        let report = try await Self.locked(scheduling: .concurrent).run(
            budget: CheckBudget(rounds: 200, time: .seconds(30)))
        #expect(report.passed, "\(report)")
    }

    @Test(arguments: [CheckScheduling.deterministic, .concurrent])
    func aContinuationNeverResumedFailsTheCheckByName(scheduling: CheckScheduling) async throws {
        let check = AsyncLinearizabilityCheck(
            model: LoadOnceSpec(), scheduling: scheduling, operations: ["a"], make: { NeverAnswers() }
        ) { service, key in
            await service.value(key)
        }
        let report = try await check.run(budget: CheckBudget(time: .seconds(1)))
        #expect(report.outcome == .hung)
        #expect(report.hungOperations.map(\.text) == ["a"])
        #expect(report.description.contains("still inside: thread 0"))
    }

    @Test func badInputIsAnErrorAtTheCall() async {
        let check = AsyncLinearizabilityCheck(
            model: LoadOnceSpec(), operations: [], make: { ReentrantCache() }
        ) { cache, key in await cache.value(key) }
        await #expect(throws: LinearizabilityCheckError.noOperations) { try await check.run() }
        await #expect(throws: LinearizabilityCheckError.emptyBudget(CheckBudget(rounds: 0))) {
            try await Self.locked().run(budget: CheckBudget(rounds: 0))
        }
    }
}

/// Answers its first question and never another: the second caller waits on a continuation
/// nobody resumes.
actor NeverAnswers {
    private var answered = false
    private var waiting: [CheckedContinuation<Int, Never>] = []

    func value(_ key: String) async -> Int {
        if !answered {
            answered = true
            return 1
        }
        return await withCheckedContinuation { waiting.append($0) }
    }
}

extension Sequence {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
