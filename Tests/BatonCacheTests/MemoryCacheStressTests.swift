import BatonTestSupport
import Foundation
import Testing

@testable import BatonCache

/// A small, fast generator: the system generator makes a system call per number, which
/// would dominate the race (and crawl under the thread sanitizer).
struct Xorshift: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }

    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
}

/// What one racing thread did, to check the statistics against.
struct ThreadTally: Sendable {
    var gets = 0
    var hits = 0
    var sets = 0
}

final class TallyBoard: @unchecked Sendable {
    private let lock = NSLock()
    private var tallies: [ThreadTally] = []  // guarded by `lock`
    private var violations: [String] = []  // guarded by `lock`

    func add(_ tally: ThreadTally) {
        lock.lock()
        tallies.append(tally)
        lock.unlock()
    }

    func violation(_ text: String) {
        lock.lock()
        if violations.count < 10 { violations.append(text) }
        lock.unlock()
    }

    var total: ThreadTally {
        lock.lock()
        defer { lock.unlock() }
        return tallies.reduce(into: ThreadTally()) {
            $0.gets += $1.gets
            $0.hits += $1.hits
            $0.sets += $1.sets
        }
    }

    var problems: [String] {
        lock.lock()
        defer { lock.unlock() }
        return violations
    }
}

@Suite("Concurrency")
struct MemoryCacheStressTests {
    static let threads = 8
    /// A long soak with BATON_STRESS=1: 20× the operations.
    static let soak = ProcessInfo.processInfo.environment["BATON_STRESS"] != nil ? 20 : 1

    /// The default policy races the full 100,000 operations per thread; LRU, which shares all
    /// of the code but the policy, a quarter of that; TinyLFU, whose window, promotions and
    /// sketch updated by concurrent readers are code of its own, half. Under a sanitizer, a tenth of each: there
    /// the full size took 343 s of the debug thread-sanitizer run's 788 s on two cores.
    @Test(
        "8 threads × 100,000 random gets, sets and removes (10,000 under a sanitizer): limits and statistics hold",
        arguments: [(EvictionPolicy.sieve, 100_000), (.lru, 25_000), (.tinyLFU, 50_000)])
    func randomOperations(policy: EvictionPolicy, operations: Int) async {
        let operationsPerThread = reducedUnderSanitizer(operations, by: 10) * Self.soak
        let countLimit = 500
        let costLimit = 1_500
        let clock = ManualClock()
        let cache = MemoryCache<Int, Int>(
            countLimit: countLimit, costLimit: costLimit, timeToLive: .microseconds(500),
            policy: policy, shardCount: 32, clock: clock.cacheClock)
        cache.holdBackgroundSweep()  // the totals below are read while nothing else runs
        let board = TallyBoard()
        let handled = CallCounter()
        cache.onEviction { key, value, _ in
            if value != key &* 31 { board.violation("handler got \(value) for key \(key)") }
            handled.increment()
        }
        var bodies: [@Sendable () -> Void] = []
        for thread in 0..<Self.threads {
            bodies.append {
                var generator = Xorshift(seed: UInt64(thread + 1))
                var tally = ThreadTally()
                for step in 0..<operationsPerThread {
                    let key = Int.random(in: 0..<2_000, using: &generator)
                    switch Int.random(in: 0..<10, using: &generator) {
                    case 0..<6:
                        tally.gets += 1
                        if let value = cache[key] {
                            tally.hits += 1
                            if value != key &* 31 { board.violation("read \(value) for key \(key)") }
                        }
                    case 6..<9:
                        tally.sets += 1
                        cache.setValue(key &* 31, forKey: key, cost: Int.random(in: 0...6, using: &generator))
                    default:
                        if let value = cache.removeValue(forKey: key), value != key &* 31 {
                            board.violation("removed \(value) for key \(key)")
                        }
                    }
                    if step % 100 == 0 {
                        if cache.count > countLimit { board.violation("count \(cache.count) > \(countLimit)") }
                        if cache.totalCost > costLimit { board.violation("cost \(cache.totalCost) > \(costLimit)") }
                        if thread == 0 { clock.advance(by: .microseconds(100)) }
                    }
                }
                board.add(tally)
            }
        }
        #expect(await raceThreads(bodies, timeout: .seconds(300)))
        #expect(board.problems.isEmpty, "\(board.problems)")
        #expect(cache.invariantViolations().isEmpty, "\(cache.invariantViolations())")
        let stats = cache.statistics
        let total = board.total
        #expect(stats.hits + stats.misses == total.gets)
        #expect(stats.hits == total.hits)
        #expect(stats.insertions == total.sets)
        #expect(stats.insertions - stats.evictions - stats.expirations - stats.removals == cache.count)
        #expect(stats.evictions + stats.expirations + stats.removals == handled.value)
        #expect(stats.expirations > 0 && stats.evictions > 0)
    }

    @Test("concurrent single-flight callers over many keys each get their key's value, loaded once per flight")
    func concurrentFlights() async throws {
        let cache = MemoryCache<Int, Int>(countLimit: 64)
        let loads = CallCounter()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for caller in 0..<400 {
                group.addTask {
                    let key = caller % 40
                    let value = try await cache.value(forKey: key) {
                        loads.increment()
                        await Task.yield()
                        return key * 3
                    }
                    if value != key * 3 { throw LoaderFailed(attempt: value) }
                }
            }
            try await group.waitForAll()
        }
        // Nothing is evicted (40 keys, limit 64), so each key is loaded exactly once.
        #expect(loads.value == 40)
        #expect(cache.count == 40)
    }
}
