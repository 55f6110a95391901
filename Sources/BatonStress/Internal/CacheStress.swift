import Atomics
import BatonCache

/// The `MemoryCache` stress run: threads get, set, remove and get-or-insert on a cache with
/// every limit on and small, so entries are evicted and expire all the time.
///
/// Every operation is followed by a check of the count and cost limits. Each round has an
/// unrecorded burst over a wider key range, then a recorded phase on a few fresh keys whose
/// history must be linearizable key by key against ``CacheModel``. With the threads stopped,
/// the statistics must add up: the round's lookups are its hits plus misses, its writes are its
/// insertions, the entries that left are what the eviction handler saw, and the count is the
/// insertions minus everything that left. Rounds alternate between a SIEVE and an LRU cache.
enum CacheStress {
    static var countLimit: Int { 12 }
    static var costLimit: Int { 24 }
    static var keysPerRound: Int { 6 }
    /// Burst keys are negative, so they never meet a recorded key.
    static var burstKeys: ClosedRange<Int> { -48 ... -1 }
    static var burstOperations: Int { 1_000 }

    static func run(_ options: StressOptions) -> StressResult {
        let session = StressSession(name: "cache", options: options)
        let subjects = [Subject(policy: .sieve), Subject(policy: .lru)]
        let checker = LinearizabilityChecker(model: CacheModel<Int, Int>())
        let perThread = max(1, options.roundOperations / options.threads)
        var round = 0
        while session.shouldContinue {
            round += 1
            let subject = subjects[round % subjects.count]
            let before = subject.snapshot()
            let currentRound = round

            let burstTallies = session.team("cache round \(round) burst") { thread in
                var tally = Tally()
                var random = SplitMix64.fresh()
                var sequence = 0
                for index in 0..<burstOperations {
                    if index & 127 == 0 && session.isPastDeadline { break }
                    let key = Int.random(in: burstKeys, using: &random)
                    sequence += 1
                    let value = uniqueValue(round: currentRound, thread: thread, sequence: sequence)
                    _ = perform(
                        randomOperation(key: key, value: value, using: &random), on: subject, tally: &tally,
                        session: session, using: &random)
                }
                return tally
            }
            guard let burstTallies else { break }

            let clock = LogicalClock()
            let firstKey = round * keysPerRound
            let recorded = session.team("cache round \(round) recorded") { thread in
                var tally = Tally()
                var random = SplitMix64.fresh()
                var log = HistoryLog<CacheModel<Int, Int>.Operation, Int?>(clock: clock, thread: thread)
                for sequence in 1...perThread {
                    let key = firstKey + Int.random(in: 0..<keysPerRound, using: &random)
                    let value = uniqueValue(round: currentRound, thread: thread, sequence: 1_000_000 + sequence)
                    let operation = randomOperation(key: key, value: value, using: &random)
                    log.record(operation) {
                        perform(operation, on: subject, tally: &tally, session: session, using: &random)
                    }
                }
                return Recorded(log: log, tally: tally)
            }
            guard let recorded else { break }

            var tally = burstTallies.reduce(Tally(), +)
            tally = recorded.map(\.tally).reduce(tally, +)
            session.countOperations(tally.operations)
            audit(subject, before: before, after: subject.snapshot(), tally: tally, round: round, session: session)
            session.record(checker.check(recorded.flatMap(\.log.entries), partitionedBy: \.key), round: round)
        }
        return session.result()
    }

    /// A value no other write of the round uses, so a lookup's output names its write.
    private static func uniqueValue(round: Int, thread: Int, sequence: Int) -> Int {
        (round << 40) | (thread << 24) | sequence
    }

    private static func randomOperation(
        key: Int, value: Int, using random: inout SplitMix64
    ) -> CacheModel<Int, Int>.Operation {
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<40: .get(key)
        case 40..<70: .set(key, value)
        case 70..<80: .remove(key)
        default: .getOrInsert(key, value)
        }
    }

    /// Performs one operation, counts it, and checks the limits right after it.
    private static func perform(
        _ operation: CacheModel<Int, Int>.Operation, on subject: Subject, tally: inout Tally,
        session: StressSession, using random: inout SplitMix64
    ) -> Int? {
        let cache = subject.cache
        let output: Int?
        tally.operations += 1
        switch operation {
        case .get(let key):
            tally.lookups += 1
            output = random.chance(20) ? cache[key] : cache.value(forKey: key)
        case .set(let key, let value):
            tally.writes += 1
            if random.chance(20) {
                cache[key] = value
            } else {
                cache.setValue(value, forKey: key, cost: Int.random(in: 1...5, using: &random))
            }
            output = nil
        case .remove(let key):
            output = cache.removeValue(forKey: key)
        case .getOrInsert(let key, let value):
            tally.lookups += 1
            let cost = Int.random(in: 1...5, using: &random)
            let found = cache.value(forKey: key, cost: cost) { value }
            // Its own value back means it stored it: values are never reused.
            if found == value { tally.writes += 1 }
            output = found
        }
        let count = cache.count
        let cost = cache.totalCost
        if count > countLimit || cost > costLimit {
            session.violations.report(
                "\(subject.policy) cache over its limits after \(operation): count \(count) "
                    + "(limit \(countLimit)), total cost \(cost) (limit \(costLimit))")
        }
        return output
    }

    /// Checks, with every thread stopped, that the round's statistics add up.
    private static func audit(
        _ subject: Subject, before: Snapshot, after: Snapshot, tally: Tally, round: Int, session: StressSession
    ) {
        let stats = after.statistics
        let old = before.statistics
        var problems: [String] = []
        let lookups = stats.lookups - old.lookups
        if lookups != tally.lookups {
            problems.append("hits + misses grew by \(lookups), but \(tally.lookups) lookups were issued")
        }
        let insertions = stats.insertions - old.insertions
        if insertions != tally.writes {
            problems.append("insertions grew by \(insertions), but \(tally.writes) writes were made")
        }
        let left = stats.evictions + stats.expirations + stats.removals
        if after.count != stats.insertions - left {
            problems.append(
                "count is \(after.count), but insertions − evictions − expirations − removals is "
                    + "\(stats.insertions - left) (\(stats))")
        }
        let handled = after.handled
        for (name, counted, seen) in [
            ("evictions", stats.evictions, handled[.count, default: 0] + handled[.cost, default: 0]),
            ("expirations", stats.expirations, handled[.expired, default: 0]),
            ("removals", stats.removals, handled[.removed, default: 0] + handled[.replaced, default: 0]),
        ] where counted != seen {
            problems.append("statistics count \(counted) \(name), the eviction handler saw \(seen)")
        }
        if after.count > countLimit || after.totalCost > costLimit {
            problems.append("over its limits: count \(after.count), total cost \(after.totalCost)")
        }
        for problem in problems {
            session.violations.report("round \(round), \(subject.policy) cache: \(problem)")
        }
    }

    /// What one thread did in a round.
    private struct Tally: Sendable {
        var operations = 0
        /// `value(forKey:)`, the subscript's getter, and every get-or-insert.
        var lookups = 0
        /// Sets, and get-or-inserts that stored their value.
        var writes = 0

        static func + (lhs: Tally, rhs: Tally) -> Tally {
            Tally(
                operations: lhs.operations + rhs.operations, lookups: lhs.lookups + rhs.lookups,
                writes: lhs.writes + rhs.writes)
        }
    }

    private struct Recorded: Sendable {
        var log: HistoryLog<CacheModel<Int, Int>.Operation, Int?>
        var tally: Tally
    }

    private struct Snapshot {
        var statistics: CacheStatistics
        var count: Int
        var totalCost: Int
        var handled: [EvictionReason: Int]
    }

    /// A cache under test and what its eviction handler has seen.
    private final class Subject: Sendable {
        let policy: EvictionPolicy
        let cache: MemoryCache<Int, Int>
        private let handled: [EvictionReason: ManagedAtomic<Int>]

        init(policy: EvictionPolicy) {
            self.policy = policy
            cache = MemoryCache(
                countLimit: CacheStress.countLimit, costLimit: CacheStress.costLimit,
                timeToLive: .milliseconds(3), timeToIdle: .milliseconds(1), policy: policy, shardCount: 4)
            let reasons: [EvictionReason] = [.count, .cost, .expired, .removed, .replaced]
            let handled = Dictionary(uniqueKeysWithValues: reasons.map { ($0, ManagedAtomic(0)) })
            self.handled = handled
            cache.onEviction { _, _, reason in
                handled[reason]!.wrappingIncrement(ordering: .relaxed)
            }
        }

        /// Only meaningful while no thread uses the cache.
        func snapshot() -> Snapshot {
            Snapshot(
                statistics: cache.statistics, count: cache.count, totalCost: cache.totalCost,
                handled: handled.mapValues { $0.load(ordering: .relaxed) })
        }
    }
}
