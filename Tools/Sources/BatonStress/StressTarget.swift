/// A structure `baton stress` can run: its name, what the run checks, and the run itself.
///
/// ```swift
/// for target in StressTarget.all {
///     let result = target.run(StressOptions(duration: .seconds(1), threads: 8))
///     print(target.name, result.passed)
/// }
/// ```
///
/// Thread safety: a plain value; `Sendable`. A run starts its own threads and returns when they
/// are done; several runs may go at once, though they then compete for the cores.
public struct StressTarget: Sendable {
    /// The name `baton stress` takes.
    public let name: String
    /// One line on what the run does and checks.
    public let summary: String
    private let body: @Sendable (StressOptions) -> StressResult

    /// Creates a target from its run.
    public init(name: String, summary: String, run body: @escaping @Sendable (StressOptions) -> StressResult) {
        self.name = name
        self.summary = summary
        self.body = body
    }

    /// Runs the structure under stress for `options.duration` and returns what it found. It
    /// returns by itself shortly after the duration: a hang inside the structure is reported as
    /// a violation after `options.hangTimeout`, never waited out.
    public func run(_ options: StressOptions) -> StressResult {
        body(options)
    }

    /// Every structure, in the order `baton stress` runs them.
    public static let all: [StressTarget] = [
        StressTarget(
            name: "protected",
            summary: "Protected counter: torn reads, exact counts, linearizable increments and reads"
        ) { CounterStress.run(name: "protected", options: $0, counter: ProtectedCounter()) },
        StressTarget(
            name: "lock",
            summary: "Lock-guarded counter: torn reads, exact counts, linearizable increments and reads"
        ) { CounterStress.run(name: "lock", options: $0, counter: LockCounter()) },
        StressTarget(
            name: "recursive-lock",
            summary: "RecursiveLock-guarded counter, entered twice per access: the same checks"
        ) { CounterStress.run(name: "recursive-lock", options: $0, counter: RecursiveLockCounter()) },
        StressTarget(
            name: "rwlock",
            summary: "ReadWriteLock-guarded counter, shared reads: the same checks"
        ) { CounterStress.run(name: "rwlock", options: $0, counter: ReadWriteLockCounter()) },
        StressTarget(
            name: "cache",
            summary: "MemoryCache with every limit small: limits, statistics, per-key linearizability"
        ) { CacheStress.run($0) },
        StressTarget(
            name: "futures",
            summary: "racing completions: exactly one wins, observers see it once, all/zip agree"
        ) { FutureStress.run($0) },
        StressTarget(
            name: "jobs",
            summary: "random DAGs with failures and cancels: one finish each, order, failure policy"
        ) { JobGraphStress.run($0) },
        StressTarget(
            name: "async-semaphore",
            summary: "AsyncSemaphore under random cancellation: width never exceeded, permits conserved exactly"
        ) { AsyncSemaphoreStress.run($0) },
        StressTarget(
            name: "async-lock",
            summary: "AsyncLock sections that await: mutual exclusion, exact counts under cancellation, linearizable"
        ) { AsyncLockStress.run($0) },
    ]

    /// The targets named, in the order given; every target when `names` is empty.
    ///
    /// - Throws: ``UnknownStressTarget`` for a name that is not a target.
    public static func named(_ names: [String]) throws(UnknownStressTarget) -> [StressTarget] {
        if names.isEmpty { return all }
        return try names.map { name throws(UnknownStressTarget) in
            guard let target = all.first(where: { $0.name == name }) else { throw UnknownStressTarget(name: name) }
            return target
        }
    }
}
