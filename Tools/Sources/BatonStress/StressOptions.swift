/// How hard and how long a stress run works.
///
/// Thread safety: a plain value; `Sendable`.
public struct StressOptions: Sendable, Hashable {
    /// How long the run lasts. It checks the clock between rounds and inside long loops, so it
    /// ends within about one round of this (a round is a few milliseconds).
    public var duration: Duration
    /// How many threads race on the structure.
    public var threads: Int
    /// How many operations a recorded round holds, across all threads: the size of each history
    /// the linearizability checker sees.
    public var roundOperations: Int
    /// How long a run waits for its threads, a queue or a future before it calls it a hang,
    /// reports a violation and stops (abandoning the threads that hang).
    public var hangTimeout: Duration

    /// Creates options.
    ///
    /// - Parameters:
    ///   - duration: How long the run lasts; must be positive.
    ///   - threads: How many threads race; at least 2.
    ///   - roundOperations: Operations per recorded round; at least `threads`.
    ///   - hangTimeout: How long a wait may take before it is reported as a hang.
    public init(duration: Duration, threads: Int, roundOperations: Int = 400, hangTimeout: Duration = .seconds(20)) {
        precondition(duration > .zero, "StressOptions: duration must be positive (got \(duration))")
        precondition(threads >= 2, "StressOptions: threads must be at least 2 (got \(threads))")
        precondition(
            roundOperations >= threads,
            "StressOptions: roundOperations (\(roundOperations)) must be at least threads (\(threads))")
        self.duration = duration
        self.threads = threads
        self.roundOperations = roundOperations
        self.hangTimeout = hangTimeout
    }
}
