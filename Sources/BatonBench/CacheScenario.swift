/// The shared-cache experiment: Baton's `MemoryCache` (SIEVE and LRU) against `NSCache` and a
/// `Lock`-protected `Dictionary` that never evicts (the floor), for time per operation under a
/// skewed get/set mix on 1 and 2 threads, and for hit ratio on Zipf and scan-polluted streams.
public struct CacheScenario: Scenario {
    public let name = "cache"
    public let summary = "shared cache on Zipf keys: MemoryCache SIEVE/LRU vs NSCache and a locked Dictionary"

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
    /// counted), and the Zipf exponents; the scan-polluted stream uses the middle one.
    static let ratioKeys = 100_000
    static let ratioRequests = 500_000
    static let ratioExponents = [0.7, 0.9, 1.1]
    static let scanExponent = 0.9

    public init() {}

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
        let ratioKeys = options.count(Self.ratioKeys, minimum: 1_000)
        let ratioCapacity = max(1, Int(Double(ratioKeys) * Self.capacityShare))
        let ratioRequests = options.count(Self.ratioRequests, minimum: 1_000)
        let warmUp = ratioRequests / 5
        let scanPeriod = ratioCapacity * 2
        let scanLength = ratioCapacity / 2

        // Repetitions outermost, so a noisy moment on a shared machine hits one rep of every
        // contender rather than every rep of one.
        for rep in 1...options.reps {
            for contender in contenders {
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
            var ratioStreams: [(label: String, stream: [Int32])] = Self.ratioExponents.map { exponent in
                let distribution = ZipfDistribution(keys: ratioKeys, exponent: exponent)
                return ("zipf \(exponent)", distribution.stream(length: ratioRequests, seed: seed))
            }
            ratioStreams.append(
                (
                    "zipf \(Self.scanExponent) + scans",
                    scanPollutedStream(
                        ZipfDistribution(keys: ratioKeys, exponent: Self.scanExponent), keys: ratioKeys,
                        length: ratioRequests, period: scanPeriod, scanLength: scanLength, seed: seed)
                ))
            for (label, stream) in ratioStreams {
                for contender in contenders where contender.bounded {
                    progress("cache: rep \(rep)/\(options.reps) hit ratio \(label) \(contender.name)")
                    record(label, contender, Unit.hitRatio, contender.measureHitRatio(ratioCapacity, stream, warmUp))
                }
            }
        }

        let results = sheet.results
        var notes = [
            "Time per operation: total wall time of all threads ÷ all operations, lower is better. Each thread does \(operations) gets or sets (90/10 or 50/50) on its own Zipf(\(Self.mixExponent)) stream over \(keys) keys; the caches hold \(capacity) (10%); each cache is warmed with \(warmUpKeys.count) read-through requests first.",
            "Slow anchors run a share of those operations so a full run stays short: "
                + contenders.filter { $0.share < 1 }.map { "\($0.name) \(Int(($0.share * 100).rounded()))%" }.joined(
                    separator: ", ") + ".",
            "Hit ratio: one thread, read-through (a miss stores the key), \(ratioRequests) requests over \(ratioKeys) keys, capacity \(ratioCapacity), the first \(warmUp) requests not counted; higher is better. Scans: \(scanLength) cold keys read once after every \(scanPeriod) Zipf requests.",
            "Lock+Dictionary never evicts, so it has no hit ratio to compare: it is the floor for time per operation only.",
        ]
        notes.append(contentsOf: sieveVersusLRU(results))
        return ScenarioReport(scenario: name, cores: activeCores, quick: options.quick, results: results, notes: notes)
    }

    /// One note comparing SIEVE's hit ratio with LRU's on every stream (both are Baton's, so
    /// the ratio table does not show it).
    private func sieveVersusLRU(_ results: [BenchResult]) -> [String] {
        let ratios = results.filter { $0.unit == Unit.hitRatio }
        let cases = ratios.map(\.case).uniqued()
        let cells = cases.compactMap { name -> String? in
            guard let sieve = ratios.first(where: { $0.case == name && $0.contender == "MemoryCache SIEVE" }),
                let lru = ratios.first(where: { $0.case == name && $0.contender == "MemoryCache LRU" })
            else { return nil }
            let difference = sieve.median - lru.median
            return "\(name) \(difference >= 0 ? "+" : "")\(formatted(difference, digits: 3))"
        }
        guard !cells.isEmpty else { return [] }
        return ["SIEVE − LRU hit ratio (median): " + cells.joined(separator: ", ") + "."]
    }
}
