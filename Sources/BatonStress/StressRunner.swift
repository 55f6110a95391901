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

    /// Creates a runner.
    ///
    /// - Parameters:
    ///   - totalDuration: The time shared among the targets; must be positive.
    ///   - threads: Threads per run; at least 2.
    ///   - roundOperations: Operations per recorded round; at least `threads`.
    ///   - hangTimeout: How long a wait may take before it is reported as a hang.
    public init(
        totalDuration: Duration, threads: Int, roundOperations: Int = 400, hangTimeout: Duration = .seconds(20)
    ) {
        self.totalDuration = totalDuration
        self.threads = threads
        self.roundOperations = max(roundOperations, threads)
        self.hangTimeout = hangTimeout
    }

    /// The options each of `count` targets runs with: an equal share of the time.
    public func options(sharedBy count: Int) -> StressOptions {
        StressOptions(
            duration: totalDuration / max(count, 1), threads: threads, roundOperations: roundOperations,
            hangTimeout: hangTimeout)
    }

    /// Runs `targets` in order, each for its share of the time, and returns their results.
    ///
    /// - Parameter progress: Receives a line when each target starts and when it ends.
    public func run(_ targets: [StressTarget], progress: (String) -> Void = { _ in }) -> [StressResult] {
        let options = options(sharedBy: targets.count)
        var results: [StressResult] = []
        for (number, target) in targets.enumerated() {
            progress(
                "[\(number + 1)/\(targets.count)] \(target.name): \(target.summary) "
                    + "(\(formatSeconds(options.duration)), \(options.threads) threads)")
            let result = target.run(options)
            progress(
                "    \(formatCount(result.operations)) operations, \(formatCount(result.historiesChecked)) histories, "
                    + "\(result.violationCount) violations in \(formatSeconds(result.elapsed))")
            results.append(result)
        }
        return results
    }
}
