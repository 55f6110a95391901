import Atomics
import BatonCache
import BatonLocks
import BatonTesting
import Foundation

/// The `MemoryCache` stress run: threads get, peek, ask `contains`, set (with the cache's
/// lifetime or one of their own), remove and get-or-insert on a cache with every limit on and
/// small, so entries are evicted and expire all the time; now and then a thread lowers or
/// raises a limit, calls `removeExpired()`, or moves the cache's clock.
///
/// The cache runs on a clock moved by hand (``ManualClock``), so expiry can be checked exactly:
/// time passes only when a thread advances it, yet the cache's own background sweep, which
/// runs on real time, still releases what that clock says has expired.
///
/// Every operation is followed by a check of the count and cost against their maxima (a
/// thread may lower a limit and another raise it at once, so the maxima are the only bound
/// that holds at every instant). Each round has an unrecorded burst over a wider key range,
/// then a recorded phase on a few fresh keys whose history must be linearizable key by key
/// against ``CacheModel``. With the threads stopped:
/// - the count and cost are within the limits then in force, and the limits go back to their
///   maxima;
/// - the statistics add up: the round's lookups (not peeks or `contains`) are its hits plus
///   misses, its writes are its insertions, the entries that left are what the eviction
///   handler saw, and the count is the insertions minus everything that left;
/// - no lookup, peek, get-or-insert or removal returned a value whose lifetime had run out on
///   the clock before the operation started;
/// - no value was reported expired before its lifetime, or the cache's time-to-idle, had
///   passed on the clock since the write started;
/// - once the clock is moved past every lifetime, `removeExpired()` leaves the cache empty and
///   the statistics still add up.
///
/// Rounds take turns between a SIEVE, an LRU and a TinyLFU cache. A violation names its round's seed, from
/// which every thread's operations (not their interleaving) are drawn, and an expiry violation
/// shows the key's operations with the clock around each.
enum CacheStress {
    /// The count limit a cache starts with, and the most a thread ever sets it to.
    static var countLimit: Int { 12 }
    /// The cost limit a cache starts with, and the most a thread ever sets it to.
    static var costLimit: Int { 24 }
    /// The lowest count limit a thread sets.
    static var lowestCountLimit: Int { 4 }
    /// The lowest cost limit a thread sets; above the highest cost of one entry, so that every
    /// write fits.
    static var lowestCostLimit: Int { 8 }
    static var keysPerRound: Int { 6 }
    /// Burst keys are negative, so they never meet a recorded key.
    static var burstKeys: ClosedRange<Int> { -48 ... -1 }
    static var burstOperations: Int { 1_000 }

    /// The cache-wide time-to-live, on the manual clock.
    static var timeToLive: Duration { .microseconds(400) }
    /// The cache-wide time-to-idle, on the manual clock.
    static var timeToIdle: Duration { .microseconds(250) }
    /// The lifetimes entries are given of their own: from well below ``timeToLive`` to twice
    /// it, in microseconds.
    static var lifetimes: ClosedRange<Int> { 50...800 }
    /// How far a thread moves the clock at a time, in microseconds.
    static var clockSteps: ClosedRange<Int> { 1...100 }
    /// How many operations on a key an expiry violation shows at most.
    static var historyLength: Int { 16 }

    static func run(_ options: StressOptions) -> StressResult {
        let session = StressSession(name: "cache", options: options)
        let subjects = [Subject(policy: .sieve), Subject(policy: .lru), Subject(policy: .tinyLFU)]
        // Each subject's writes of its last round: an expiry its background sweep reports late
        // may still name one of them.
        var lastWrites: [[Int: ClockedOperation]] = subjects.map { _ in [:] }
        let checker = LinearizabilityChecker(model: CacheModel<Int, Int>())
        let perThread = max(1, options.roundOperations / options.threads)
        var system = SystemRandomNumberGenerator()
        var round = 0
        while session.shouldContinue {
            round += 1
            let number = round % subjects.count
            let subject = subjects[number]
            let before = subject.snapshot()
            let currentRound = round
            // Each thread draws its operations from a generator seeded from this: a violation
            // names it, so the operations (not their interleaving) can be drawn again.
            let seed = system.next()

            let burst = session.team("cache round \(round) burst") { thread in
                var work = ThreadWork(thread: thread)
                var random = generator(seed: seed, phase: 0, thread: thread)
                var sequence = 0
                for index in 0..<burstOperations {
                    if index & 127 == 0 && session.isPastDeadline { break }
                    if perform(sideAction(using: &random), on: subject, work: &work, using: &random) { continue }
                    let key = Int.random(in: burstKeys, using: &random)
                    sequence += 1
                    let value = uniqueValue(round: currentRound, thread: thread, sequence: sequence)
                    _ = perform(
                        randomOperation(key: key, value: value, using: &random), on: subject, work: &work,
                        session: session, using: &random)
                }
                return work
            }
            guard let burst else { break }

            let logicalClock = LogicalClock()
            let firstKey = round * keysPerRound
            let recorded = session.team("cache round \(round) recorded") { thread in
                var work = ThreadWork(thread: thread)
                var random = generator(seed: seed, phase: 1, thread: thread)
                var log = HistoryLog<CacheModel<Int, Int>.Operation, Int?>(clock: logicalClock, thread: thread)
                for sequence in 1...perThread {
                    // Side actions act on no key: they stay out of the history, which allows
                    // any entry to go at any time.
                    if perform(sideAction(using: &random), on: subject, work: &work, using: &random) { continue }
                    let key = firstKey + Int.random(in: 0..<keysPerRound, using: &random)
                    let value = uniqueValue(round: currentRound, thread: thread, sequence: 1_000_000 + sequence)
                    let operation = randomOperation(key: key, value: value, using: &random)
                    log.record(operation) {
                        perform(operation, on: subject, work: &work, session: session, using: &random)
                    }
                }
                return Recorded(log: log, work: work)
            }
            guard let recorded else { break }

            let work = burst + recorded.map(\.work)
            let tally = work.map(\.tally).reduce(Tally(), +)
            session.countOperations(tally.operations)
            let seedText = "0x" + String(seed, radix: 16)
            let report = { (problem: String) in
                session.violations.report("round \(round) (seed \(seedText)), \(subject.policy) cache: \(problem)")
            }
            restoreLimits(subject, report: report)
            audit(subject, before: before, tally: tally, report: report)
            let verdict = checker.check(recorded.flatMap(\.log.entries), partitionedBy: \.key)
            session.countHistory(undecided: verdict.isUndecided)
            if let violation = verdict.violation { report("\(violation)") }
            expireEverything(subject, report: report)
            let clocked = ClockedHistory(work.flatMap(\.operations))
            checkExpiry(subject, history: clocked, earlierWrites: lastWrites[number], report: report)
            lastWrites[number] = clocked.writes
        }
        return session.result()
    }

    /// The generator of one thread in one phase of a round.
    private static func generator(seed: UInt64, phase: UInt64, thread: Int) -> SeededGenerator {
        var mixer = SeededGenerator(seed: seed ^ (phase << 32) ^ UInt64(thread))
        return SeededGenerator(seed: mixer.next())
    }

    /// A value no other write of the round uses, so a lookup's output names its write.
    private static func uniqueValue(round: Int, thread: Int, sequence: Int) -> Int {
        (round << 40) | (thread << 24) | sequence
    }

    private static func randomOperation(
        key: Int, value: Int, using random: inout SeededGenerator
    ) -> CacheModel<Int, Int>.Operation {
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<25: .get(key)
        case 25..<35: .peek(key)
        case 35..<43: .contains(key)
        case 43..<63: .set(key, value)
        case 63..<75: .setWithLifetime(key, value)
        case 75..<85: .remove(key)
        default: .getOrInsert(key, value)
        }
    }

    /// What a thread does now and then instead of an operation on a key.
    private enum SideAction {
        case none
        case advanceClock
        case removeExpired
        case changeLimit
    }

    private static func sideAction(using random: inout SeededGenerator) -> SideAction {
        switch Int.random(in: 0..<1_000, using: &random) {
        case 0..<40: .advanceClock
        case 40..<50: .removeExpired
        case 50..<60: .changeLimit
        default: .none
        }
    }

    /// Performs a side action; false for ``SideAction/none``.
    private static func perform(
        _ action: SideAction, on subject: Subject, work: inout ThreadWork, using random: inout SeededGenerator
    ) -> Bool {
        let cache = subject.cache
        switch action {
        case .none:
            return false
        case .advanceClock:
            subject.clock.advance(by: .microseconds(Int.random(in: clockSteps, using: &random)))
        case .removeExpired:
            cache.removeExpired()
        case .changeLimit:
            // Down to a random limit, or back up to the maximum. No check follows: another
            // thread may change it again at once.
            let toMaximum = random.chance(40)
            if random.chance(50) {
                cache.countLimit =
                    toMaximum ? countLimit : Int.random(in: lowestCountLimit...countLimit, using: &random)
            } else {
                cache.costLimit = toMaximum ? costLimit : Int.random(in: lowestCostLimit...costLimit, using: &random)
            }
        }
        work.tally.operations += 1
        return true
    }

    /// Performs one operation, counts it, notes the clock around it for the expiry checks, and
    /// checks the limits right after it.
    private static func perform(
        _ operation: CacheModel<Int, Int>.Operation, on subject: Subject, work: inout ThreadWork,
        session: StressSession, using random: inout SeededGenerator
    ) -> Int? {
        let cache = subject.cache
        let output: Int?
        work.tally.operations += 1
        let start = subject.clock.nanoseconds
        var lifetime = timeToLive
        switch operation {
        case .get(let key):
            work.tally.lookups += 1
            output = random.chance(20) ? cache[key] : cache.value(forKey: key)
        case .peek(let key):
            output = cache.peek(key)
        case .contains(let key):
            output = cache.contains(key) ? 0 : nil
        case .set(let key, let value):
            if random.chance(20) {
                cache[key] = value
            } else {
                cache.setValue(value, forKey: key, cost: Int.random(in: 1...5, using: &random))
            }
            output = nil
        case .setWithLifetime(let key, let value):
            lifetime = .microseconds(Int.random(in: lifetimes, using: &random))
            cache.setValue(value, forKey: key, cost: Int.random(in: 1...5, using: &random), timeToLive: lifetime)
            output = nil
        case .remove(let key):
            output = cache.removeValue(forKey: key)
        case .getOrInsert(let key, let value):
            work.tally.lookups += 1
            let cost = Int.random(in: 1...5, using: &random)
            let own: Duration? = random.chance(30) ? .microseconds(Int.random(in: lifetimes, using: &random)) : nil
            lifetime = own ?? timeToLive
            output = cache.value(forKey: key, cost: cost, timeToLive: own) { value }
        }
        let end = subject.clock.nanoseconds
        let clocked = ClockedOperation(
            thread: work.thread, operation: operation, output: output, start: start, end: end,
            lifetime: lifetime.wholeNanoseconds)
        // A get-or-insert that got its own value back stored it: values are never reused.
        if clocked.written != nil { work.tally.writes += 1 }
        work.operations.append(clocked)
        let count = cache.count
        let cost = cache.totalCost
        if count > countLimit || cost > costLimit {
            session.violations.report(
                "\(subject.policy) cache over its limits after \(operation): count \(count) "
                    + "(limit \(countLimit)), total cost \(cost) (limit \(costLimit))")
        }
        return output
    }

    /// With every thread stopped: checks the count and cost against the limits in force, then
    /// sets both limits back to their maxima.
    private static func restoreLimits(_ subject: Subject, report: (String) -> Void) {
        let cache = subject.cache
        let (count, cost) = (cache.count, cache.totalCost)
        let (countInForce, costInForce) = (cache.countLimit ?? .max, cache.costLimit ?? .max)
        if count > countInForce || cost > costInForce {
            report(
                "over the limits in force: count \(count) (limit \(countInForce)), total cost \(cost) "
                    + "(limit \(costInForce))")
        }
        cache.countLimit = Self.countLimit
        cache.costLimit = Self.costLimit
        if cache.countLimit != Self.countLimit || cache.costLimit != Self.costLimit {
            report(
                "limits set back to \(Self.countLimit) and \(Self.costLimit) read back as "
                    + "\(String(describing: cache.countLimit)) and \(String(describing: cache.costLimit))")
        }
    }

    /// Checks, with every thread stopped, that the round's statistics add up.
    private static func audit(_ subject: Subject, before: Snapshot, tally: Tally, report: (String) -> Void) {
        let after = subject.settledSnapshot()
        let stats = after.statistics
        let old = before.statistics
        var problems: [String] = []
        let lookups = stats.lookups - old.lookups
        if lookups != tally.lookups {
            problems.append(
                "hits + misses grew by \(lookups), but \(tally.lookups) lookups were issued "
                    + "(peeks and contains must count neither)")
        }
        let insertions = stats.insertions - old.insertions
        if insertions != tally.writes {
            problems.append("insertions grew by \(insertions), but \(tally.writes) writes were made")
        }
        problems += after.inconsistencies
        if after.count > countLimit || after.totalCost > costLimit {
            problems.append("over its limits: count \(after.count), total cost \(after.totalCost)")
        }
        problems.forEach(report)
    }

    /// With every thread stopped: moves the clock past every lifetime, removes what has
    /// expired, and checks that nothing is left and that the statistics still add up.
    private static func expireEverything(_ subject: Subject, report: (String) -> Void) {
        subject.clock.advance(by: .microseconds(lifetimes.upperBound) + timeToLive + timeToIdle)
        subject.cache.removeExpired()
        let after = subject.settledSnapshot { $0.count == 0 && $0.totalCost == 0 }
        if after.count != 0 || after.totalCost != 0 {
            report(
                "after the clock passed every lifetime and removeExpired(), the cache still holds "
                    + "\(after.count) entries of total cost \(after.totalCost)")
        }
        after.inconsistencies.map { "after removeExpired(): \($0)" }.forEach(report)
    }

    /// Checks the clock readings of the round: no operation returned a value whose lifetime
    /// had run out before it started, and no value was reported expired before it could have.
    private static func checkExpiry(
        _ subject: Subject, history: ClockedHistory, earlierWrites: [Int: ClockedOperation], report: (String) -> Void
    ) {
        let idle = timeToIdle.wholeNanoseconds
        for read in history.reads {
            guard let value = read.output, let write = history.writes[value] else { continue }
            let deadline = write.end + write.lifetime
            if read.start >= deadline {
                report(
                    "\(read.operation) returned \(value), expired since \(describe(deadline)): written "
                        + "\(describe(write.start))–\(describe(write.end)) with a lifetime of "
                        + "\(describe(write.lifetime)); the operation started at \(describe(read.start)). "
                        + history.describe(key: read.operation.key, from: write.start - idle, to: read.end))
            }
        }
        for expiry in subject.drainExpiries() {
            guard let write = history.writes[expiry.value] ?? earlierWrites[expiry.value] else { continue }
            let earliest = write.start + min(write.lifetime, idle)
            if expiry.time < earliest {
                report(
                    "expired \(expiry.value) early: reported expired at \(describe(expiry.time)), but it was "
                        + "written from \(describe(write.start)) with a lifetime of \(describe(write.lifetime)) "
                        + "and time-to-idle \(describe(idle)), so not before \(describe(earliest)). "
                        + history.describe(key: expiry.key, from: write.start - idle, to: expiry.time))
            }
        }
    }

    /// A manual-clock time or span, in microseconds.
    private static func describe(_ nanoseconds: Int64) -> String {
        let microseconds = Double(nanoseconds) / 1_000
        return "\(microseconds) µs"
    }

    /// What one thread did in a round.
    private struct Tally: Sendable {
        var operations = 0
        /// `value(forKey:)`, the subscript's getter, and every get-or-insert; not `peek` or
        /// `contains`, which count neither a hit nor a miss.
        var lookups = 0
        /// Sets, and get-or-inserts that stored their value.
        var writes = 0

        static func + (lhs: Tally, rhs: Tally) -> Tally {
            Tally(
                operations: lhs.operations + rhs.operations, lookups: lhs.lookups + rhs.lookups,
                writes: lhs.writes + rhs.writes)
        }
    }

    /// An operation on a key, with the manual clock read just before it started and just
    /// after it returned.
    private struct ClockedOperation: Sendable {
        var thread: Int
        var operation: CacheModel<Int, Int>.Operation
        var output: Int?
        var start: Int64
        var end: Int64
        /// For a write: its own lifetime, or the cache's time-to-live.
        var lifetime: Int64

        /// The value this operation stored, if it is a write.
        var written: Int? {
            switch operation {
            case .set(_, let value), .setWithLifetime(_, let value): value
            case .getOrInsert(_, let value) where output == value: value
            default: nil
            }
        }

        /// Whether it returned a value that it did not store itself.
        var isRead: Bool {
            switch operation {
            case .get, .peek, .remove, .getOrInsert: output != nil && written == nil
            case .contains, .set, .setWithLifetime: false
            }
        }

        var description: String {
            let model = CacheModel<Int, Int>()
            return "thread \(thread) [\(describe(start))–\(describe(end))] \(model.describe(operation, output))"
        }
    }

    /// Every thread's clocked operations of a round.
    private struct ClockedHistory {
        var operations: [ClockedOperation]
        /// The writes, by the value they stored.
        var writes: [Int: ClockedOperation]

        init(_ operations: [ClockedOperation]) {
            self.operations = operations
            writes = [:]
            for operation in operations {
                if let value = operation.written { writes[value] = operation }
            }
        }

        var reads: some Sequence<ClockedOperation> { operations.lazy.filter(\.isRead) }

        /// The operations on `key` whose clock interval meets `from...to`, in order of start, as
        /// a violation shows them.
        func describe(key: Int, from: Int64, to: Int64) -> String {
            let shown = operations.filter { $0.operation.key == key && $0.end >= from && $0.start <= to }
                .sorted { ($0.start, $0.end) < ($1.start, $1.end) }
            let lines = shown.suffix(CacheStress.historyLength).map { "\n    \($0.description)" }
            let skipped = shown.count > lines.count ? " (the last \(lines.count) of \(shown.count))" : ""
            return "Operations on key \(key)\(skipped):" + lines.joined()
        }
    }

    /// One thread's tally and clocked operations, kept apart from every other thread's until
    /// the round is over.
    private struct ThreadWork: Sendable {
        var thread: Int
        var tally = Tally()
        var operations: [ClockedOperation] = []
    }

    private struct Recorded: Sendable {
        var log: HistoryLog<CacheModel<Int, Int>.Operation, Int?>
        var work: ThreadWork
    }

    /// An entry the eviction handler saw expire, with the clock read in the handler.
    private struct Expiry: Sendable {
        var key: Int
        var value: Int
        var time: Int64
    }

    private struct Snapshot {
        var statistics: CacheStatistics
        var count: Int
        var totalCost: Int
        var handled: [EvictionReason: Int]

        /// Where the count, the statistics and what the eviction handler saw disagree.
        var inconsistencies: [String] {
            let stats = statistics
            var problems: [String] = []
            let left = stats.evictions + stats.expirations + stats.removals
            if count != stats.insertions - left {
                problems.append(
                    "count is \(count), but insertions − evictions − expirations − removals is "
                        + "\(stats.insertions - left) (\(stats))")
            }
            for (name, counted, seen) in [
                ("evictions", stats.evictions, handled[.count, default: 0] + handled[.cost, default: 0]),
                ("expirations", stats.expirations, handled[.expired, default: 0]),
                ("removals", stats.removals, handled[.removed, default: 0] + handled[.replaced, default: 0]),
            ] where counted != seen {
                problems.append("statistics count \(counted) \(name), the eviction handler saw \(seen)")
            }
            return problems
        }
    }

    /// A clock moved by hand: nanoseconds in an atomic, read by the cache for every operation.
    private final class ManualClock: Sendable {
        private let time = ManagedAtomic<Int64>(0)

        var nanoseconds: Int64 { time.load(ordering: .sequentiallyConsistent) }

        func advance(by step: Duration) {
            time.wrappingIncrement(by: step.wholeNanoseconds, ordering: .sequentiallyConsistent)
        }

        var cacheClock: CacheClock {
            CacheClock { .nanoseconds(self.nanoseconds) }
        }
    }

    /// A cache under test, its clock, and what its eviction handler has seen.
    private final class Subject: Sendable {
        let policy: EvictionPolicy
        let clock: ManualClock
        let cache: MemoryCache<Int, Int>
        private let handled: [EvictionReason: ManagedAtomic<Int>]
        private let expiries: Protected<[Expiry]>

        init(policy: EvictionPolicy) {
            self.policy = policy
            let clock = ManualClock()
            let expiries = Protected([Expiry]())
            let reasons: [EvictionReason] = [.count, .cost, .expired, .removed, .replaced]
            let handled = Dictionary(uniqueKeysWithValues: reasons.map { ($0, ManagedAtomic(0)) })
            self.clock = clock
            self.expiries = expiries
            self.handled = handled
            cache = MemoryCache(
                countLimit: CacheStress.countLimit, costLimit: CacheStress.costLimit,
                timeToLive: CacheStress.timeToLive, timeToIdle: CacheStress.timeToIdle, policy: policy,
                shardCount: 4, clock: clock.cacheClock)
            cache.onEviction { key, value, reason in
                if reason == .expired {
                    let time = clock.nanoseconds
                    expiries.write { $0.append(Expiry(key: key, value: value, time: time)) }
                }
                handled[reason]!.wrappingIncrement(ordering: .relaxed)
            }
        }

        /// The expiries seen since the last call.
        func drainExpiries() -> [Expiry] {
            expiries.write { expiries in
                defer { expiries = [] }
                return expiries
            }
        }

        /// Only meaningful while no thread uses the cache.
        func snapshot() -> Snapshot {
            Snapshot(
                statistics: cache.statistics, count: cache.count, totalCost: cache.totalCost,
                handled: handled.mapValues { $0.load(ordering: .relaxed) })
        }

        /// A snapshot taken once the numbers agree (and `settled` holds), or the last of a few
        /// tries a few milliseconds apart. With the threads stopped, only the cache's own
        /// background sweep still runs, and one caught between releasing an entry and counting
        /// it leaves the numbers apart for a moment.
        func settledSnapshot(until settled: (Snapshot) -> Bool = { _ in true }) -> Snapshot {
            var snapshot = snapshot()
            var tries = 1
            while tries < 50 && !(snapshot.inconsistencies.isEmpty && settled(snapshot)) {
                Thread.sleep(forTimeInterval: 0.002)
                snapshot = self.snapshot()
                tries += 1
            }
            return snapshot
        }
    }
}
