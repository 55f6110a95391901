import BatonCache
import BatonLocks
import BatonTesting
import Foundation
import Prometheus

/// A cache from `Int` to `Int` as the cache scenario drives it.
protocol BenchCache: AnyObject, Sendable {
    init(capacity: Int)
    func get(_ key: Int) -> Int?
    func set(_ key: Int, _ value: Int)
}

/// A Baton `MemoryCache` as the scenario drives it, made with `Setup`'s policy and shards.
final class BatonMemoryCache<Setup: MemoryCacheSetup>: BenchCache {
    private let cache: MemoryCache<Int, Int>
    init(capacity: Int) {
        cache = MemoryCache(countLimit: capacity, policy: Setup.policy, shardCount: Setup.shardCount)
    }
    func get(_ key: Int) -> Int? { cache.value(forKey: key) }
    func set(_ key: Int, _ value: Int) { cache.setValue(value, forKey: key) }
}

/// A Baton `MemoryCache` (SIEVE) watched by a `MetricsReporter` that exports its statistics to a
/// Prometheus registry every 10 ms (a thousand times the reporter's default rate), as a service
/// scraped by Prometheus runs it: what watching costs the cache's hit path, beside the same cache
/// unwatched.
final class WatchedMemoryCache: BenchCache {
    static let interval = Duration.milliseconds(10)
    private let cache: MemoryCache<Int, Int>
    let registry = PrometheusCollectorRegistry()
    private let reporting: Task<Void, Never>

    init(capacity: Int) {
        cache = MemoryCache(countLimit: capacity, policy: .sieve)
        let reporter = MetricsReporter(interval: Self.interval, factory: PrometheusMetricsFactory(registry: registry))
        reporter.watch(cache, name: "bench")
        reporting = Task { await reporter.run() }
    }

    deinit { reporting.cancel() }

    func get(_ key: Int) -> Int? { cache.value(forKey: key) }
    func set(_ key: Int, _ value: Int) { cache.setValue(value, forKey: key) }
}

extension WatchedMemoryCache {
    /// The median time of one `report()` of a cache into a Prometheus registry, whatever the
    /// interval: its ten metrics sampled and exported, with hits and misses counted since the
    /// report before (one lookup between reports). Batches of `reports`, the median batch's mean.
    static func reportTime(batches: Int, reports: Int) -> Duration {
        let cache = MemoryCache<Int, Int>(countLimit: 1_000, policy: .sieve)
        for key in 0..<2_000 { cache.setValue(key, forKey: key) }
        let reporter = MetricsReporter(factory: PrometheusMetricsFactory(registry: PrometheusCollectorRegistry()))
        reporter.watch(cache, name: "bench")
        reporter.report()  // makes the metrics
        let clock = ContinuousClock()
        var times: [Duration] = []
        for _ in 0..<batches {
            let elapsed = clock.measure {
                for index in 0..<reports {
                    _ = cache.value(forKey: index % 2_000)
                    reporter.report()
                }
            }
            times.append(elapsed / reports)
        }
        return times.sorted()[batches / 2]
    }
}

/// How one of Baton's cache contenders is made: a type per contender, so that each is measured
/// through code specialised for it, as the anchors are.
protocol MemoryCacheSetup {
    static var policy: EvictionPolicy { get }
    /// Nil for the cache's default.
    static var shardCount: Int? { get }
}

extension MemoryCacheSetup {
    static var shardCount: Int? { nil }
}

enum SieveSetup: MemoryCacheSetup { static var policy: EvictionPolicy { .sieve } }
enum LRUSetup: MemoryCacheSetup { static var policy: EvictionPolicy { .lru } }
enum TinyLFUSetup: MemoryCacheSetup { static var policy: EvictionPolicy { .tinyLFU } }

/// TinyLFU in one shard: the same policy without sharding, to show what sharding costs in hit
/// ratio (each shard evicts its own victim, with its own sketch).
enum TinyLFUOneShardSetup: MemoryCacheSetup {
    static var policy: EvictionPolicy { .tinyLFU }
    static var shardCount: Int? { 1 }
}

/// `NSCache` with `countLimit`, keyed and valued by `NSNumber` as Swift code on Linux must
/// (its keys and values are objects).
final class FoundationCache: BenchCache, @unchecked Sendable {
    // NSCache is documented thread-safe; it is not marked Sendable in corelibs-foundation.
    private let cache = NSCache<NSNumber, NSNumber>()
    init(capacity: Int) { cache.countLimit = capacity }
    // corelibs-foundation's NSCache links its entries both ways and never frees them on its own
    // deinit; emptying it first unlinks them.
    deinit { cache.removeAllObjects() }
    func get(_ key: Int) -> Int? { cache.object(forKey: NSNumber(value: key))?.intValue }
    func set(_ key: Int, _ value: Int) { cache.setObject(NSNumber(value: value), forKey: NSNumber(value: key)) }
}

/// The floor: a `Lock` around a `[Int: Int]` that never evicts — the least work a thread-safe
/// cache can do per operation.
final class LockedDictionaryCache: BenchCache, @unchecked Sendable {
    // `dictionary` is only touched inside `lock.withLock`.
    private let lock = Lock()
    @exclusivity(unchecked) private var dictionary: [Int: Int] = [:]
    init(capacity: Int) { dictionary.reserveCapacity(capacity) }
    func get(_ key: Int) -> Int? { lock.withLock { dictionary[key] } }
    func set(_ key: Int, _ value: Int) { lock.withLock { dictionary[key] = value } }
}

/// A contender of the cache scenario: a name and the ways to measure it.
struct CacheContender: Sendable {
    let name: String
    let baton: Bool
    /// Whether its hit ratio is measured: it has a capacity, so that its hit ratio means
    /// something, and a policy that no other contender measures already.
    let bounded: Bool
    /// Whether it runs the time-per-operation mixes (or only the hit-ratio streams).
    let timed: Bool
    /// Slow contenders run this fraction of the timed operations so a full run stays within
    /// minutes; the reported figure is per operation either way.
    let share: Double
    let makeCache: @Sendable (_ capacity: Int) -> any BenchCache
    let measureMix:
        @Sendable (_ cache: any BenchCache, _ streams: [OperationStream], _ setPercent: Int, _ operations: Int) ->
            Double
    let measureHitRatio: @Sendable (_ capacity: Int, _ stream: [Int32], _ warmUp: Int) -> Double

    init<C: BenchCache>(
        _ name: String, baton: Bool = false, bounded: Bool = true, timed: Bool = true, share: Double = 1,
        _ type: C.Type
    ) {
        self.name = name
        self.baton = baton
        self.bounded = bounded
        self.timed = timed
        self.share = share
        makeCache = { C(capacity: $0) }
        measureMix = { cache, streams, setPercent, operations in
            timeMix(cache as! C, streams: streams, setPercent: setPercent, operations: operations)
        }
        measureHitRatio = { capacity, stream, warmUp in
            hitRatio(C(capacity: capacity), stream: stream, warmUp: warmUp)
        }
    }

    static let all: [CacheContender] = [
        CacheContender("MemoryCache SIEVE", baton: true, BatonMemoryCache<SieveSetup>.self),
        CacheContender(
            "MemoryCache SIEVE, watched", baton: true, bounded: false, WatchedMemoryCache.self),
        CacheContender("MemoryCache LRU", baton: true, BatonMemoryCache<LRUSetup>.self),
        CacheContender("MemoryCache TinyLFU", baton: true, BatonMemoryCache<TinyLFUSetup>.self),
        CacheContender(
            "MemoryCache TinyLFU, 1 shard", baton: true, timed: false, BatonMemoryCache<TinyLFUOneShardSetup>.self),
        CacheContender("NSCache", share: 0.02, FoundationCache.self),
        CacheContender("Lock+Dictionary (no eviction)", bounded: false, LockedDictionaryCache.self),
    ]
}

/// Fills a cache the way the timed run will use it: a get for each key, and a set on a miss.
func warm(_ cache: some BenchCache, keys: [Int32]) {
    for key in keys where cache.get(Int(key)) == nil {
        cache.set(Int(key), Int(key))
    }
}

/// Mean wall time per operation, in nanoseconds, with one thread per stream each doing
/// `operations` gets or sets (a set when the stream's die is below `setPercent`).
private func timeMix<C: BenchCache>(_ cache: C, streams: [OperationStream], setPercent: Int, operations: Int) -> Double
{
    let threshold = UInt8(setPercent)
    let bodies: [@Sendable () -> Void] = streams.map { stream in
        {
            let count = min(operations, stream.keys.count)
            var sum = 0
            for i in 0..<count {
                let key = Int(stream.keys[i])
                if stream.dice[i] < threshold {
                    cache.set(key, i)
                } else {
                    sum &+= cache.get(key) ?? 0
                }
            }
            blackHole(sum)
        }
    }
    let elapsed = raceThreads(bodies)
    return elapsed.nanoseconds / Double(min(operations, streams[0].keys.count) * streams.count)
}

/// The fraction of gets that hit, on one thread, when each miss stores the key (a read-through
/// cache). The first `warmUp` requests fill the cache and are not counted.
private func hitRatio<C: BenchCache>(_ cache: C, stream: [Int32], warmUp: Int) -> Double {
    var hits = 0
    for (index, key) in stream.enumerated() {
        if cache.get(Int(key)) != nil {
            if index >= warmUp { hits += 1 }
        } else {
            cache.set(Int(key), Int(key))
        }
    }
    return Double(hits) / Double(max(1, stream.count - warmUp))
}
