#if Metrics
import BatonLocks
import BatonTestSupport
import CoreMetrics
import Dispatch
import MetricsTestKit
import Testing

@testable import BatonCache

/// A cache watched by `MetricsReporter`: every statistic it keeps, under its documented name and
/// labels, read back through swift-metrics' test backend.
@Suite(.timeLimit(.minutes(1))) struct CacheMetricsTests {
    private static let cache = ("cache", "images")

    private func counter(_ metrics: TestMetrics, _ label: String, _ more: [(String, String)] = []) throws -> Int64 {
        try metrics.expectCounter(label, [Self.cache] + more).totalValue
    }

    private func gauge(_ metrics: TestMetrics, _ label: String) throws -> Double? {
        try metrics.expectGauge(label, [Self.cache]).lastValue
    }

    @Test func everyStatisticIsExportedUnderItsNameAndReason() throws {
        let clock = ManualClock()
        // One shard, so that the limits evict exactly where the test says.
        let cache = MemoryCache<String, Int>(countLimit: 3, costLimit: 10, shardCount: 1, clock: clock.cacheClock)
        let metrics = TestMetrics()
        let reporter = MetricsReporter(factory: metrics)
        reporter.watch(cache, name: "images")

        cache.setValue(1, forKey: "a", cost: 4)
        cache.setValue(2, forKey: "b", cost: 4)
        cache.setValue(3, forKey: "c", cost: 4)  // 12 > 10: one evicted for the cost
        cache.setValue(4, forKey: "d")
        cache.setValue(5, forKey: "e")  // 4 entries > 3: one evicted for the count
        cache.setValue(6, forKey: "e")  // replaced: a removal
        cache.setValue(7, forKey: "short", timeToLive: .seconds(1))
        clock.advance(by: .seconds(2))
        #expect(cache.value(forKey: "short") == nil)  // expired: a miss and an expiration
        #expect(cache.value(forKey: "e") == 6)
        #expect(cache.value(forKey: "nothing") == nil)
        _ = cache.removeValue(forKey: "e")
        reporter.report()

        let statistics = cache.statistics
        #expect(try counter(metrics, "baton_cache_hits_total") == 1)
        #expect(try counter(metrics, "baton_cache_misses_total") == 2)
        #expect(try counter(metrics, "baton_cache_insertions_total") == Int64(statistics.insertions))
        #expect(statistics.insertions == 7)
        #expect(try counter(metrics, "baton_cache_evictions_total", [("reason", "cost")]) >= 1)
        #expect(try counter(metrics, "baton_cache_evictions_total", [("reason", "count")]) >= 1)
        let evictions =
            try counter(metrics, "baton_cache_evictions_total", [("reason", "cost")])
            + counter(metrics, "baton_cache_evictions_total", [("reason", "count")])
        #expect(evictions == Int64(statistics.evictions))
        #expect(try counter(metrics, "baton_cache_expirations_total") == 1)
        #expect(try counter(metrics, "baton_cache_removals_total") == 2)
        #expect(try gauge(metrics, "baton_cache_entries") == Double(cache.count))
        #expect(try gauge(metrics, "baton_cache_cost") == Double(cache.totalCost))
    }

    @Test func aCostEvictionIsCountedUnderCostAndACountEvictionUnderCount() throws {
        let metrics = TestMetrics()
        let reporter = MetricsReporter(factory: metrics)
        let byCost = MemoryCache<Int, Int>(costLimit: 10, shardCount: 1)
        let byCount = MemoryCache<Int, Int>(countLimit: 2, shardCount: 1)
        reporter.watch(byCost, name: "cost")
        reporter.watch(byCount, name: "count")
        for key in 0..<5 {
            byCost.setValue(key, forKey: key, cost: 5)
            byCount.setValue(key, forKey: key)
        }
        reporter.report()
        func evictions(_ name: String, _ reason: String) throws -> Int64 {
            try metrics.expectCounter("baton_cache_evictions_total", [("cache", name), ("reason", reason)]).totalValue
        }
        #expect(try evictions("cost", "cost") == 3 && evictions("cost", "count") == 0)
        #expect(try evictions("count", "count") == 3 && evictions("count", "cost") == 0)
    }

    @Test func hitsRacedWithReportsAreExportedExactlyOnce() throws {
        let cache = MemoryCache<Int, Int>()
        for key in 0..<64 { cache.setValue(key, forKey: key) }
        let metrics = TestMetrics()
        let reporter = MetricsReporter(factory: metrics)
        reporter.watch(cache, name: "images")
        let done = Protected(0)
        #expect(
            raceThreads(4) { index in
                if index == 0 {
                    while done.value < 3 { reporter.report() }
                } else {
                    for round in 0..<12_800 { _ = cache.value(forKey: round % 128) }  // half of them hits
                    done.write { $0 += 1 }
                }
            })
        reporter.report()
        #expect(try counter(metrics, "baton_cache_hits_total") == 19_200)
        #expect(try counter(metrics, "baton_cache_misses_total") == 19_200)
    }

    @Test func aReleasedCacheHasItsMetricsDestroyed() throws {
        let metrics = TestMetrics()
        let reporter = MetricsReporter(factory: metrics)
        var cache: MemoryCache<Int, Int>? = MemoryCache()
        reporter.watch(cache!, name: "images")
        cache!.setValue(1, forKey: 1)
        reporter.report()
        #expect(!metrics.counters(label: "baton_cache_insertions_total").isEmpty)
        cache = nil
        reporter.report()
        #expect(metrics.counters(label: "baton_cache_insertions_total").isEmpty)
        #expect(metrics.recorders(label: "baton_cache_entries").isEmpty)
    }
}
#endif
