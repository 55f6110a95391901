import Atomics
import Dispatch
import Foundation
import Testing

@testable import BatonCache

/// `countLimit` and `costLimit` changed on a live cache: lowering evicts before the setter
/// returns, raising takes effect at once, and the limits hold at every instant meanwhile.
@Suite("Live limits")
struct LiveLimitTests {
    @Test(
        "Lowering countLimit evicts the policy's victims, oldest first, before it returns",
        arguments: [EvictionPolicy.sieve, .lru])
    func loweringCountLimitEvicts(policy: EvictionPolicy) {
        let cache = MemoryCache<Int, Int>(countLimit: 10, policy: policy, shardCount: 1)
        let log = EvictionLog.attached(to: cache)
        for key in 1...10 { cache[key] = key }
        cache.countLimit = 4
        #expect(cache.countLimit == 4)
        #expect(cache.count == 4)
        #expect(log.keys == [1, 2, 3, 4, 5, 6])
        #expect(log.reasons == Array(repeating: .count, count: 6))
        #expect(cache.statistics.evictions == 6)
        for key in 7...10 { #expect(cache.peek(key) == key) }
        // The new limit holds for later writes too.
        cache[11] = 11
        #expect(cache.count == 4)
        #expect(cache.invariantViolations().isEmpty)
    }

    @Test("Lowering countLimit on a sharded cache evicts down to it exactly")
    func loweringCountLimitAcrossShards() {
        let cache = MemoryCache<Int, Int>(countLimit: 1_000, shardCount: 8)
        for key in 0..<1_000 { cache[key] = key }
        cache.countLimit = 137
        #expect(cache.count == 137)
        #expect(cache.statistics.evictions == 863)
        #expect(cache.invariantViolations().isEmpty)
    }

    @Test("Raising countLimit admits more entries at once, evicting nothing")
    func raisingCountLimit() {
        let cache = MemoryCache<Int, Int>(countLimit: 3, shardCount: 1)
        for key in 1...3 { cache[key] = key }
        cache.countLimit = 5
        cache[4] = 4
        cache[5] = 5
        #expect(cache.count == 5)
        #expect(cache.statistics.evictions == 0)
        cache[6] = 6
        #expect(cache.count == 5)
        #expect(cache.statistics.evictions == 1)
    }

    @Test("nil removes a limit; a limit set on an unlimited cache evicts down to it")
    func removingAndAddingLimits() {
        let cache = MemoryCache<Int, Int>(countLimit: 2, shardCount: 1)
        cache.countLimit = nil
        #expect(cache.countLimit == nil)
        for key in 0..<50 { cache[key] = key }
        #expect(cache.count == 50)
        cache.countLimit = 20
        #expect(cache.count == 20)
        cache.costLimit = 10
        #expect(cache.costLimit == 10)
        #expect(cache.count == 10)
        #expect(cache.totalCost == 10)
    }

    @Test("Lowering costLimit evicts with reason .cost down to the new total")
    func loweringCostLimit() {
        let cache = MemoryCache<Int, Int>(costLimit: 100, shardCount: 1)
        let log = EvictionLog.attached(to: cache)
        for key in 1...10 { cache.setValue(key, forKey: key, cost: 10) }
        cache.costLimit = 35
        #expect(cache.totalCost == 30)
        #expect(cache.count == 3)
        #expect(log.keys == Array(1...7))
        #expect(Set(log.reasons) == [.cost])
    }

    @Test("A limit of 0 empties the cache and refuses later writes; raising it again admits them")
    func zeroLimit() {
        let cache = MemoryCache<Int, Int>(countLimit: 5, costLimit: 50, shardCount: 2)
        let log = EvictionLog.attached(to: cache)
        for key in 1...5 { cache[key] = key }
        cache.countLimit = 0
        #expect(cache.count == 0)
        cache[6] = 6
        #expect(cache.count == 0)
        #expect(log.entries.last?.key == 6)
        #expect(log.entries.last?.reason == .count)
        cache.countLimit = 5
        cache[7] = 7
        #expect(cache[7] == 7)
        // A cost limit lowered below an entry's cost refuses that entry, with reason .cost.
        cache.costLimit = 3
        cache.setValue(8, forKey: 8, cost: 4)
        #expect(cache.peek(8) == nil)
        #expect(log.entries.last?.key == 8)
        #expect(log.entries.last?.reason == .cost)
    }

    @Test("A negative limit is a precondition failure that names it")
    func negativeLimit() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let cache = MemoryCache<Int, Int>(countLimit: 5)
            cache.countLimit = -1
        }
        // An optimised precondition stops the process without its message.
        #if DEBUG
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("countLimit must not be negative (got -1)"), "stderr: \(message)")
        #else
        _ = result
        #endif
        await #expect(processExitsWith: .failure) {
            let cache = MemoryCache<Int, Int>(costLimit: 5)
            cache.costLimit = -3
        }
    }

    /// Four threads write (costs 1...5) while a fifth lowers both limits step by step, down to
    /// a cost limit below some writes' cost, and an observer checks the limits the whole time.
    /// Reading the limit before the count is safe while limits only fall: the count at any
    /// later instant is within the limit of that instant, which is no higher.
    /// A writer loads its counter word, then the limit, then compare-and-swaps the word. The
    /// window between the two loads is too narrow for a test to hit on purpose, so this holds
    /// what closes it: a limit change moves its counter word's epoch (and nothing else), so a
    /// word loaded before the change no longer matches and the writer loads the limit again.
    @Test("A limit change moves its counter's epoch: a reservation that loaded the word before it must look again")
    func aLimitChangeMovesTheEpoch() {
        let budget = CacheBudget(countLimit: 10, costLimit: 100)
        #expect(budget.reserve(count: 1, cost: 7) == .reserved)
        for limit in [CacheBudget.Limit.count, .cost] {
            let word = budget.words(limit).counter
            let other = budget.words(limit == .count ? .cost : .count).counter
            let loaded = word.load(ordering: .relaxed)
            let untouched = other.load(ordering: .relaxed)
            budget.admit(limit, upTo: 5)
            let (exchanged, now) = word.compareExchange(expected: loaded, desired: loaded &+ 1, ordering: .relaxed)
            #expect(!exchanged, "a \(limit) reservation that loaded the word before the change went through")
            #expect(now &- loaded == CacheBudget.epochStep)
            #expect(other.load(ordering: .relaxed) == untouched)
            budget.raise(limit, to: 50)
            #expect(word.load(ordering: .relaxed) &- loaded == 2 * CacheBudget.epochStep)
        }
        #expect(budget.count == 1)
        #expect(budget.cost == 7)
        #expect(budget.reserve(count: 1, cost: 3) == .reserved)
        #expect((budget.count, budget.cost) == (2, 10))
    }

    @Test("Limits lowered under racing writers hold at every instant and after every setter", .timeLimit(.minutes(1)))
    func loweringUnderRacingWriters() async {
        let cache = MemoryCache<Int, Int>(countLimit: 2_000, costLimit: 6_000, shardCount: 8)
        let handled = ManagedAtomic(0)
        cache.onEviction { _, _, _ in handled.wrappingIncrement(ordering: .relaxed) }
        let problems = ProblemLog()
        let settersDone = ManagedAtomic(false)
        let writes = ManagedAtomic(0)
        var bodies: [@Sendable () -> Void] = (0..<3).map { thread in
            {
                var random = Xorshift(seed: UInt64(thread + 1))
                var sequence = 0
                while !settersDone.load(ordering: .relaxed) || sequence < 2_000 {
                    sequence += 1
                    let key = Int(random.next() % 4_096)
                    cache.setValue(sequence, forKey: key, cost: Int(random.next() % 5) + 1)
                    writes.wrappingIncrement(ordering: .relaxed)
                }
            }
        }
        bodies.append {
            for step in stride(from: 2_000, through: 10, by: -10) {
                cache.countLimit = step
                if cache.count > step { problems.add("count \(cache.count) above \(step) after its setter returned") }
                let costStep = max(3, step * 3)
                cache.costLimit = costStep
                if cache.totalCost > costStep {
                    problems.add("cost \(cache.totalCost) above \(costStep) after its setter returned")
                }
            }
            settersDone.store(true, ordering: .relaxed)
        }
        bodies.append {
            while !settersDone.load(ordering: .relaxed) {
                let countLimit = cache.countLimit ?? .max
                let count = cache.count
                if count > countLimit { problems.add("observed count \(count) above countLimit \(countLimit)") }
                let costLimit = cache.costLimit ?? .max
                let cost = cache.totalCost
                if cost > costLimit { problems.add("observed cost \(cost) above costLimit \(costLimit)") }
            }
        }
        #expect(await raceThreads(bodies))
        #expect(problems.all.isEmpty, "\(problems.all.prefix(5))")
        #expect(cache.countLimit == 10)
        #expect(cache.costLimit == 30)
        #expect(cache.count <= 10)
        #expect(cache.totalCost <= 3 * 10)
        #expect(cache.invariantViolations().isEmpty)
        let stats = cache.statistics
        #expect(stats.insertions == writes.load(ordering: .relaxed))
        #expect(stats.insertions - stats.evictions - stats.removals - stats.expirations == cache.count)
        #expect(stats.evictions + stats.removals + stats.expirations == handled.load(ordering: .relaxed))
    }

    /// Raising only: reading the count before the limit is the safe order, as limits only rise.
    @Test("Limits raised under racing writers hold at every instant", .timeLimit(.minutes(1)))
    func raisingUnderRacingWriters() async {
        let cache = MemoryCache<Int, Int>(countLimit: 10, costLimit: 20, shardCount: 4)
        let problems = ProblemLog()
        let done = ManagedAtomic(false)
        var bodies: [@Sendable () -> Void] = (0..<2).map { thread in
            {
                var random = Xorshift(seed: UInt64(thread + 7))
                while !done.load(ordering: .relaxed) {
                    cache.setValue(1, forKey: Int(random.next() % 10_000), cost: Int(random.next() % 3) + 1)
                }
            }
        }
        bodies.append {
            for step in 11...1_000 {
                cache.countLimit = step
                cache.costLimit = step * 2
            }
            done.store(true, ordering: .relaxed)
        }
        bodies.append {
            while !done.load(ordering: .relaxed) {
                let count = cache.count
                let countLimit = cache.countLimit ?? .max
                if count > countLimit { problems.add("observed count \(count) above countLimit \(countLimit)") }
                let cost = cache.totalCost
                let costLimit = cache.costLimit ?? .max
                if cost > costLimit { problems.add("observed cost \(cost) above costLimit \(costLimit)") }
            }
        }
        #expect(await raceThreads(bodies))
        #expect(problems.all.isEmpty, "\(problems.all.prefix(5))")
        #expect(cache.countLimit == 1_000)
        #expect(cache.invariantViolations().isEmpty)
    }
}

/// Problems found by racing threads, collected for one `#expect` at the end.
final class ProblemLog: @unchecked Sendable {
    private let lock = NSLock()
    private var problems: [String] = []  // guarded by `lock`

    func add(_ problem: String) {
        lock.lock()
        if problems.count < 100 { problems.append(problem) }
        lock.unlock()
    }

    var all: [String] {
        lock.lock()
        defer { lock.unlock() }
        return problems
    }
}
