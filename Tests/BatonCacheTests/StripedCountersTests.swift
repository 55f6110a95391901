import BatonLocks
import Foundation
import Testing

@testable import BatonCache

/// The statistics are striped by thread; these check that no count is lost however the
/// threads fall on the stripes, including more threads than stripes (which then share one).
@Suite(.timeLimit(.minutes(1)))
struct StripedCountersTests {
    @Test("threads get distinct numbers, so the first threads each get a stripe of their own")
    func threadsGetDistinctNumbers() async {
        let numbers = Protected<[Int]>([])
        let kept = Protected<[Bool]>([])
        let bodies: [@Sendable () -> Void] = (0..<6).map { _ in
            {
                // A new thread: its first call gives it a number, and later calls return it.
                let first = ThreadStripe.current
                let again = ThreadStripe.current
                let third = ThreadStripe.current
                numbers.write { $0.append(first) }
                kept.write { $0.append(first == again && again == third) }
            }
        }
        #expect(await raceThreads(bodies))
        let seen = numbers.value
        #expect(seen.count == 6)
        #expect(Set(seen).count == 6, "two threads were given one number: \(seen)")
        #expect(kept.value == Array(repeating: true, count: 6), "a thread's number changed between calls")
    }

    @Test("the stripe count is a power of two, twice the cores, at most 64", arguments: [1, 2, 3, 8, 40, 200])
    func stripeCount(cores: Int) {
        let count = ThreadStripe.stripeCount(cores: cores)
        #expect(count & (count - 1) == 0)
        #expect(count >= min(64, 2 * cores))
        #expect(count <= 64)
    }

    @Test("no increment is lost when more threads than stripes count at once")
    func noIncrementIsLostWhenThreadsShareStripes() async {
        let counters = CacheCounters(stripes: 2)
        defer { counters.deallocate() }
        let threads = 8
        let perThread = 20_000
        let bodies: [@Sendable () -> Void] = (0..<threads).map { _ in
            {
                for step in 0..<perThread {
                    counters.increment(.hits)
                    if step % 4 == 0 { counters.increment(.evictions, by: 3) }
                }
            }
        }
        #expect(await raceThreads(bodies))
        #expect(counters.load(.hits) == threads * perThread)
        #expect(counters.load(.evictions) == threads * (perThread / 4) * 3)
        #expect(counters.load(.misses) == 0)
    }

    @Test("a cache's statistics add up over many threads")
    func cacheStatisticsAddUp() async {
        let cache = MemoryCache<Int, Int>(countLimit: 10_000)
        for key in 0..<100 { cache[key] = key }
        let threads = 3 * ThreadStripe.stripeCount(cores: ProcessInfo.processInfo.activeProcessorCount)
        let perThread = 2_000
        let bodies: [@Sendable () -> Void] = (0..<threads).map { _ in
            { for step in 0..<perThread { _ = cache.value(forKey: step % 200) } }
        }
        #expect(await raceThreads(bodies))
        let stats = cache.statistics
        #expect(stats.hits == threads * perThread / 2)
        #expect(stats.misses == threads * perThread / 2)
        #expect(stats.insertions == 100)
    }
}
