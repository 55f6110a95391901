import BatonTesting

/// The classic readers-writers experiment: W writer and R reader threads on one shared
/// `[Int: Int]` of 1,024 keys, each doing a fixed number of random writes or reads (or as many
/// as fit in a time cap, for a lock that collapses), guarded by each lock in turn; plus one
/// thread alone reading or writing (the uncontended cost).
public struct LocksScenario: Scenario {
    public let name = "locks"
    public let summary = "readers-writers on a shared [Int: Int]: Baton's locks vs NSLock, pthread, Mutex, GCD"

    /// The mixes of the classic experiment, as (writers, readers, keys a read sums): one key
    /// per read, and 1w/10r again with reads that sum 32 keys (a longer read section).
    static let mixes: [(writers: Int, readers: Int, readSpan: Int)] = [
        (3, 10, 1), (1, 10, 1), (1, 10, longReadSpan), (5, 5, 1), (10, 1, 1),
    ]
    static let longReadSpan = 32

    /// Operations per thread in a full run, for every contender.
    static let operationsPerThread = 100_000
    /// How long a mix may run before its threads are stopped (in a full run): Baton's locks
    /// take 30–130 ms, a collapsing anchor would take many seconds.
    static let cap = Duration.milliseconds(400)
    /// Operations of the single-thread cases in a full run.
    static let uncontendedOperations = 2_000_000

    /// Contenders left out of the run, by name.
    let excluded: Set<String>

    /// - Parameter excluding: Names of contenders to leave out (e.g. `"Synchronization.Mutex"`,
    ///   whose synchronisation Thread Sanitizer cannot see).
    public init(excluding: Set<String> = []) {
        excluded = excluding
    }

    public func run(_ options: BenchOptions, progress: BenchProgress) -> ScenarioReport {
        let contenders = LockContender.all.filter { !excluded.contains($0.name) }
        var sheet = SampleSheet()
        func record(_ name: String, _ contender: LockContender, _ value: Double) {
            sheet.record(value, case: name, contender: contender.name, baton: contender.baton)
        }

        let operations = options.count(Self.operationsPerThread, minimum: 10)
        let cap = Duration.milliseconds(options.count(Int(Self.cap.nanoseconds / 1e6), minimum: 20))
        // Repetitions outermost, so a noisy moment on a shared machine hits one rep of every
        // contender rather than every rep of one.
        for rep in 1...options.reps {
            for mix in Self.mixes {
                let label = "\(mix.writers)w/\(mix.readers)r" + (mix.readSpan > 1 ? " long reads" : "")
                for contender in contenders {
                    progress("locks: rep \(rep)/\(options.reps) \(label) \(contender.name)")
                    record(label, contender, contender.measure(mix.writers, mix.readers, mix.readSpan, operations, cap))
                }
            }
            for write in [false, true] {
                let label = write ? "uncontended write" : "uncontended read"
                for contender in contenders {
                    progress("locks: rep \(rep)/\(options.reps) \(label) \(contender.name)")
                    let operations = options.count(
                        Int(Double(Self.uncontendedOperations) * contender.share), minimum: 10)
                    record(label, contender, contender.measureUncontended(write, operations))
                }
            }
        }

        let results = sheet.results
        let shares = contenders.filter { $0.share < 1 }.map { "\($0.name) \(Int(($0.share * 100).rounded()))%" }
        return ScenarioReport(
            scenario: name, cores: activeCores, quick: options.quick, results: results,
            notes: [
                "Mean wall time per operation: total wall time of all threads ÷ all operations, lower is better.",
                "Each thread does \(operations) random reads or writes on 1,024 keys, every contender alike, so that every lock's threads overlap as in a program; a contender still running after \(cap) is stopped there and measured by the operations done. The single-thread cases do \(options.count(Self.uncontendedOperations, minimum: 10)) operations.",
                "A read looks up one key; in \"long reads\" it sums \(Self.longReadSpan) consecutive keys under the read lock, a longer read section.",
                "Slow anchors run a share of the single-thread operations so a full run stays short: \(shares.joined(separator: ", ")).",
            ])
    }
}
