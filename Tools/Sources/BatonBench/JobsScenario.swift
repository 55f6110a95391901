import BatonTesting

/// Job queues against Foundation's `OperationQueue` and GCD: independent tiny jobs, a chain of
/// dependent jobs, a fan-in, and a random DAG, each timed from the first job created to the
/// last one finished and reported per job.
public struct JobsScenario: Scenario {
    public let name = "jobs"
    public let summary =
        "independent jobs, a dependent chain, a fan-in and a random DAG: JobQueue vs OperationQueue and GCD"

    /// Sizes of a full run.
    static let independentJobs = 100_000
    /// OperationQueue on Linux is quadratic in queued dependent operations: 8,000 is the
    /// chain's full size for every contender.
    static let chainJobs = 8_000
    static let fanInJobs = 10_000
    static let dagJobs = 20_000

    public init() {}

    public func run(_ options: BenchOptions, progress: BenchProgress) -> ScenarioReport {
        let workers = activeCores
        let cases: [(name: String, shape: JobGraphShape)] = [
            ("independent", .independent(options.count(Self.independentJobs, minimum: 10))),
            ("chain", .chain(options.count(Self.chainJobs, minimum: 10), addedLastFirst: true)),
            ("chain, in order", .chain(options.count(Self.chainJobs, minimum: 10), addedLastFirst: false)),
            ("fan-in", .fanIn(options.count(Self.fanInJobs, minimum: 10))),
            ("random DAG", .randomDAG(options.count(Self.dagJobs, minimum: 10), seed: 2024)),
            ("random DAG ×4", .randomDAG(options.count(Self.dagJobs * 4, minimum: 10), seed: 2024)),
        ]
        let contenders = JobsContender.all
        var sheet = SampleSheet()

        // Repetitions outermost, so a noisy moment hits one rep of every contender.
        for rep in 1...options.reps {
            for entry in cases {
                for contender in contenders {
                    progress(
                        "jobs: rep \(rep)/\(options.reps) \(entry.name) (\(entry.shape.count) jobs) \(contender.name)")
                    let elapsed = contender.run(entry.shape, workers)
                    sheet.record(
                        elapsed.nanoseconds / Double(entry.shape.count), case: entry.name,
                        contender: contender.name, baton: contender.baton)
                }
            }
        }

        let results = sheet.results
        let sizes = cases.map { "\($0.name) \($0.shape.count)" }.joined(separator: ", ")
        return ScenarioReport(
            scenario: name, cores: activeCores, quick: options.quick, results: results,
            notes: [
                "Time per job: wall time from creating the first job to the last one finished, ÷ jobs; lower is better.",
                "Jobs per case: \(sizes). Both queues run at most \(workers) jobs at once (the core count); GCD uses the global queue.",
                "Graphs: OperationQueue and JobQueue get every job with its dependencies in one batch; GCD gets a DispatchGroup per job that its dependents notify on.",
                "The chain is \(Self.chainJobs) jobs in a full run for every contender: OperationQueue is quadratic in queued dependent operations. \"chain\" hands the queues the jobs last first (each dependent queued before what it waits for, the case where OperationQueue rescans every waiting operation); \"chain, in order\" first to last.",
                "\"random DAG ×4\" is the same kind of graph at four times the size: with a cost linear in jobs + edges the time per job stays close (it still grows somewhat with cache misses, for GCD too); a quadratic scheduler would take 4× per job.",
            ])
    }
}
