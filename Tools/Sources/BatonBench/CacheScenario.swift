/// The shared-cache experiment: Baton's `MemoryCache` (SIEVE, LRU and TinyLFU) against
/// `NSCache` and a `Lock`-protected `Dictionary` that never evicts (the floor), for time per
/// operation under a skewed get/set mix on 1 and 2 threads; and for hit ratio on Zipf and
/// scan-polluted streams at two capacities, against libCacheSim's S3-FIFO, ARC and W-TinyLFU
/// on the same streams, under Belady's offline optimum as the ceiling.
public struct CacheScenario: Scenario {
    public let name = "cache"
    public let summary =
        "shared cache on Zipf keys: MemoryCache vs NSCache and a locked Dictionary; hit ratio vs libCacheSim and Belady"

    /// Keys of the time-per-operation stream, and the caches' capacity as a share of them.
    static let mixKeys = 1_000_000
    static let capacityShare = 0.1
    /// Zipf exponent of the time-per-operation stream.
    static let mixExponent = 0.99
    /// Timed operations per thread in a full run.
    static let operationsPerThread = 1_000_000
    /// The mixes, as set percentages (90/10 and 50/50 get/set), each on 1 and 2 threads.
    static let mixes: [(label: String, setPercent: Int)] = [("90/10", 10), ("50/50", 50)]
    static let threadCounts = [1, 2]

    /// The hit-ratio streams: keys, requests (the first fifth warm the cache up and are not
    /// counted), the Zipf exponents (each with and without scans), and the capacities as
    /// shares of the keys.
    static let ratioKeys = 100_000
    static let ratioRequests = 500_000
    static let ratioExponents = [0.7, 0.9, 1.1]
    static let ratioCapacityShares = [0.01, 0.1]

    /// The names of the rows that are not caches: libCacheSim's anchors and the ceiling.
    static func anchorName(_ policy: String) -> String { "libCacheSim \(policy)" }
    static let beladyName = "Belady (offline optimum)"

    /// The hit-ratio case for a stream: "zipf 0.9 + scans, 1%".
    static func ratioCase(exponent: Double, scans: Bool, share: Double) -> String {
        "zipf \(exponent)\(scans ? " + scans" : ""), \(formatted(share * 100, digits: 0))%"
    }

    /// Runs libCacheSim's anchors; replaced in tests.
    let anchors: LibCacheSimAnchors

    public init() {
        anchors = LibCacheSimAnchors()
    }

    init(anchors: LibCacheSimAnchors) {
        self.anchors = anchors
    }

    public func run(_ options: BenchOptions, progress: BenchProgress) -> ScenarioReport {
        let contenders = CacheContender.all
        var sheet = SampleSheet()
        func record(_ name: String, _ contender: CacheContender, _ unit: String, _ value: Double) {
            sheet.record(value, case: name, contender: contender.name, baton: contender.baton, unit: unit)
        }

        // Time per operation: one Zipf(0.99) stream per thread, generated once and reused by
        // every contender and repetition; the caches hold 10% of the keys.
        let keys = options.count(Self.mixKeys, minimum: 1_000)
        let capacity = max(1, Int(Double(keys) * Self.capacityShare))
        let operations = options.count(Self.operationsPerThread, minimum: 100)
        progress("cache: generating Zipf(\(Self.mixExponent)) streams over \(keys) keys")
        let zipf = ZipfDistribution(keys: keys, exponent: Self.mixExponent)
        let streams = (0..<(Self.threadCounts.max() ?? 1)).map { thread in
            OperationStream(zipf, length: operations, seed: 0xCAC4E + UInt64(thread))
        }
        let warmUpKeys = zipf.stream(length: capacity * 2, seed: 0x3A3)

        // Hit ratio: fresh caches on streams of their own.
        // At least 10,000 keys, so that 1% is 100 entries: libCacheSim's W-TinyLFU sizes its
        // window as 1% of the cache and holds nothing when that rounds to 0.
        let ratioKeys = options.count(Self.ratioKeys, minimum: 10_000)
        let ratioRequests = options.count(Self.ratioRequests, minimum: 50_000)
        let warmUp = ratioRequests / 5
        var anchorSkip: String?
        var anchorVersion: String?

        // Repetitions outermost, so a noisy moment on a shared machine hits one rep of every
        // contender rather than every rep of one.
        for rep in 1...options.reps {
            for contender in contenders where contender.timed {
                // One warmed cache per contender and repetition serves every mix, in order.
                progress("cache: rep \(rep)/\(options.reps) warming \(contender.name)")
                let cache = contender.makeCache(capacity)
                warm(cache, keys: warmUpKeys)
                for mix in Self.mixes {
                    for threads in Self.threadCounts {
                        let label = "\(mix.label) ×\(threads)"
                        progress("cache: rep \(rep)/\(options.reps) \(label) \(contender.name)")
                        let count = max(10, Int(Double(operations) * contender.share))
                        let nanoseconds = contender.measureMix(
                            cache, Array(streams.prefix(threads)), mix.setPercent, count)
                        record(label, contender, Unit.nanosecondsPerOperation, nanoseconds)
                    }
                }
            }
            let seed = UInt64(rep) &* 0x9E37_79B9
            var traces: [LibCacheSimAnchors.Trace] = []
            for share in Self.ratioCapacityShares {
                let capacity = max(1, Int(Double(ratioKeys) * share))
                for exponent in Self.ratioExponents {
                    let distribution = ZipfDistribution(keys: ratioKeys, exponent: exponent)
                    for scans in [false, true] {
                        let label = Self.ratioCase(exponent: exponent, scans: scans, share: share)
                        let stream =
                            scans
                            ? scanPollutedStream(
                                distribution, keys: ratioKeys, length: ratioRequests, period: capacity * 2,
                                scanLength: max(1, capacity / 2), seed: seed)
                            : distribution.stream(length: ratioRequests, seed: seed)
                        for contender in contenders where contender.bounded {
                            progress("cache: rep \(rep)/\(options.reps) hit ratio \(label) \(contender.name)")
                            record(label, contender, Unit.hitRatio, contender.measureHitRatio(capacity, stream, warmUp))
                        }
                        sheet.record(
                            beladyHitRatio(stream: stream, capacity: capacity, warmUp: warmUp), case: label,
                            contender: Self.beladyName, baton: false, unit: Unit.hitRatio)
                        traces.append(.init(label: label, keys: stream, capacity: capacity))
                    }
                }
            }
            // Once skipped, skipped for the whole run: every repetition would fail the same way.
            guard anchorSkip == nil else { continue }
            progress("cache: rep \(rep)/\(options.reps) libCacheSim anchors on \(traces.count) streams")
            switch anchors.measure(traces, warmUp: warmUp) {
            case .measured(let version, let rows):
                anchorVersion = version
                for row in rows {
                    sheet.record(
                        row.hitRatio, case: row.label, contender: Self.anchorName(row.policy), baton: false,
                        unit: Unit.hitRatio)
                }
            case .skipped(let reason):
                anchorSkip = reason
            }
        }

        var results = sheet.results
        // A skip after a measured repetition leaves anchors with fewer samples than the rest.
        if anchorSkip != nil {
            results.removeAll { $0.contender.hasPrefix(Self.anchorName("")) }
        }
        var notes = [
            "Time per operation: total wall time of all threads ÷ all operations, lower is better. Each thread does \(operations) gets or sets (90/10 or 50/50) on its own Zipf(\(Self.mixExponent)) stream over \(keys) keys; the caches hold \(capacity) (10%); each cache is warmed with \(warmUpKeys.count) read-through requests first.",
            "Slow anchors run a share of those operations so a full run stays short: "
                + contenders.filter { $0.share < 1 }.map { "\($0.name) \(Int(($0.share * 100).rounded()))%" }.joined(
                    separator: ", ") + ".",
            "Hit ratio: one thread, read-through (a miss stores the key), \(ratioRequests) requests over \(ratioKeys) keys, capacity 1% or 10% of the keys; the first \(warmUp) requests fill the cache and are not counted, for every row alike (libCacheSim's and Belady's too); higher is better. Scans: after every 2 × capacity Zipf requests, capacity ÷ 2 cold keys read once each.",
            "\(Self.beladyName) evicts the key requested again farthest in the future, or declines to store the requested key if that is the one, and enters the counted requests holding the warm-up's keys wanted soonest: no policy can do better, so it is the ceiling, not an anchor.",
            "Lock+Dictionary never evicts, so it has no hit ratio to compare: it is the floor for time per operation only.",
            "MemoryCache SIEVE, watched: the same cache as MemoryCache SIEVE, watched by a MetricsReporter that exports its statistics to a Prometheus registry every \(WatchedMemoryCache.interval) while the threads run (the reporter's default is 10 s); its hit ratio is SIEVE's.",
        ]
        if let anchorSkip {
            notes.append(
                "libCacheSim anchors skipped: \(anchorSkip). Tools/Scripts/cache-anchors.py measures them (see Tools/README.md)."
            )
        } else if let anchorVersion {
            notes.append(
                "libCacheSim \(anchorVersion) (Python module), run by Tools/Scripts/cache-anchors.py on the very streams the caches above were measured on, with libCacheSim's default parameters."
            )
        }
        notes.append(contentsOf: differences(results))
        notes.append(contentsOf: watchingCost(results))
        progress("cache: the time of one report")
        notes.append(reportCost(WatchedMemoryCache.reportTime(batches: 7, reports: options.quick ? 200 : 5_000)))
        return ScenarioReport(
            scenario: name, cores: activeCores, quick: options.quick, results: results, notes: notes,
            ceilings: [Self.beladyName])
    }

    /// What watching the cache costs its operations: the watched cache's median time over the
    /// unwatched one's, per mix and thread count.
    private func watchingCost(_ results: [BenchResult]) -> [String] {
        let times = results.filter { $0.unit == Unit.nanosecondsPerOperation }
        func median(_ name: String, _ contender: String) -> Double? {
            times.first { $0.case == name && $0.contender == contender }?.median
        }
        let cells = times.map(\.case).uniqued().compactMap { name -> String? in
            guard let watched = median(name, "MemoryCache SIEVE, watched"),
                let plain = median(name, "MemoryCache SIEVE"),
                plain > 0
            else { return nil }
            return "\(name) ×\(formatted(watched / plain, digits: 3))"
        }
        guard !cells.isEmpty else { return [] }
        return [
            "Watched ÷ unwatched MemoryCache SIEVE time per operation (median): " + cells.joined(separator: "; ") + "."
        ]
    }

    /// What one report costs, and what share of a core the reports take at the reporter's
    /// default interval and at the watched row's.
    private func reportCost(_ report: Duration) -> String {
        let microseconds = report.seconds * 1e6
        func share(_ interval: Duration) -> String {
            let percent = report.seconds / interval.seconds * 100
            return percent >= 0.01 ? "\(formatted(percent, digits: 3))%" : "\(formatted(percent * 1e4, digits: 3)) ppm"
        }
        return
            "One report of the watched cache (10 metrics into the Prometheus registry): \(formatted(microseconds, digits: 3)) µs "
            + "(median); every 10 s, the reporter's default, that is \(share(.seconds(10))) of one core, and every "
            + "\(WatchedMemoryCache.interval), as in the watched row, \(share(WatchedMemoryCache.interval))."
    }

    /// Notes on the hit-ratio differences the ratio table does not show: TinyLFU against the
    /// best libCacheSim anchor, the sharded cache against one shard, SIEVE against LRU.
    private func differences(_ results: [BenchResult]) -> [String] {
        let ratios = results.filter { $0.unit == Unit.hitRatio }
        let cases = ratios.map(\.case).uniqued()
        func median(_ name: String, _ contender: String) -> Double? {
            ratios.first { $0.case == name && $0.contender == contender }?.median
        }
        func note(_ title: String, _ difference: (String) -> Double?) -> String? {
            let cells = cases.compactMap { name in
                difference(name).map { "\(name) \($0 >= 0 ? "+" : "")\(formatted($0, digits: 4))" }
            }
            return cells.isEmpty ? nil : "\(title) (median): " + cells.joined(separator: "; ") + "."
        }
        let anchors = LibCacheSimAnchors.policies.map(Self.anchorName)
        return [
            note("MemoryCache TinyLFU − best libCacheSim anchor hit ratio") { name in
                guard let tinyLFU = median(name, "MemoryCache TinyLFU"),
                    let best = anchors.compactMap({ median(name, $0) }).max()
                else { return nil }
                return tinyLFU - best
            },
            note("MemoryCache TinyLFU sharded − 1 shard hit ratio") { name in
                guard let sharded = median(name, "MemoryCache TinyLFU"),
                    let single = median(name, "MemoryCache TinyLFU, 1 shard")
                else { return nil }
                return sharded - single
            },
            note("SIEVE − LRU hit ratio") { name in
                guard let sieve = median(name, "MemoryCache SIEVE"), let lru = median(name, "MemoryCache LRU")
                else { return nil }
                return sieve - lru
            },
        ].compactMap { $0 }
    }
}
