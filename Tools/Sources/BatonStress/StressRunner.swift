/// Runs several stress targets one after another, sharing a total time among them: what
/// `baton stress` does.
///
/// ```swift
/// let runner = StressRunner(totalDuration: .seconds(10), threads: 8)
/// let results = runner.run(StressTarget.all) { line in print(line) }
/// print(StressReport(results).render())
/// ```
///
/// Thread safety: a plain value; `Sendable`. ``run(_:progress:)`` blocks the calling thread.
public struct StressRunner: Sendable {
    /// The time shared among the targets run.
    public var totalDuration: Duration
    /// How many threads race in each run.
    public var threads: Int
    /// Operations per recorded round (see ``StressOptions/roundOperations``).
    public var roundOperations: Int
    /// How long a wait may take before it counts as a hang (see ``StressOptions/hangTimeout``).
    public var hangTimeout: Duration
    /// Whether each run switches on Baton's lock diagnostics (see ``run(_:progress:)``).
    public var watchesLocks: Bool

    /// Creates a runner.
    ///
    /// - Parameters:
    ///   - totalDuration: The time shared among the targets; must be positive.
    ///   - threads: Threads per run; at least 2.
    ///   - roundOperations: Operations per recorded round; at least `threads`.
    ///   - hangTimeout: How long a wait may take before it is reported as a hang.
    ///   - watchesLocks: Whether each run switches on Baton's lock diagnostics. They are
    ///     process-wide: pass `false` where other code relies on their settings meanwhile.
    public init(
        totalDuration: Duration, threads: Int, roundOperations: Int = 400, hangTimeout: Duration = .seconds(20),
        watchesLocks: Bool = true
    ) {
        self.totalDuration = totalDuration
        self.threads = threads
        self.roundOperations = max(roundOperations, threads)
        self.hangTimeout = hangTimeout
        self.watchesLocks = watchesLocks
    }

    /// The options each of `count` targets runs with: an equal share of the time.
    public func options(sharedBy count: Int) -> StressOptions {
        StressOptions(
            duration: totalDuration / max(count, 1), threads: threads, roundOperations: roundOperations,
            hangTimeout: hangTimeout)
    }

    /// Runs `targets` in order, each for its share of the time, and returns their results.
    ///
    /// With ``watchesLocks``, each run has Baton's lock diagnostics on: a lock-order inversion or
    /// a lock re-entry is one more violation of the run, and the contention of the named locks it
    /// used is kept in its result. The diagnostics' switches and report handler are restored
    /// afterwards.
    ///
    /// - Parameter progress: Receives a line when each target starts and when it ends.
    public func run(_ targets: [StressTarget], progress: (String) -> Void = { _ in }) -> [StressResult] {
        let options = options(sharedBy: targets.count)
        var results: [StressResult] = []
        for (number, target) in targets.enumerated() {
            progress(
                "[\(number + 1)/\(targets.count)] \(target.name): \(target.summary) "
                    + "(\(formatSeconds(options.duration)), \(options.threads) threads)")
            var result: StressResult
            if watchesLocks {
                let findings: LockWatch.Findings
                (result, findings) = LockWatch.watch { target.run(options) }
                result.violations += findings.problems
                result.violationCount += findings.problems.count
                result.lockStatistics = findings.statistics
            } else {
                result = target.run(options)
            }
            progress(
                "    \(formatCount(result.operations)) operations, \(formatCount(result.historiesChecked)) histories, "
                    + "\(result.violationCount) violations in \(formatSeconds(result.elapsed))")
            results.append(result)
        }
        return results
    }
}
