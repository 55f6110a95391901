import Atomics
import BatonJobs
import BatonLocks
import BatonTesting

/// The `JobQueue` stress run: random dependency graphs with random failures, random
/// dependency-failure policies and random cancels, added to a queue with several workers by
/// racing threads.
///
/// Each round builds a DAG (every job depends on up to three earlier ones), lets the threads add
/// the jobs in random order while cancelling random jobs, waits for the queue (a wait beyond the
/// hang timeout is a violation), and audits every job: it finished exactly once and its
/// observers saw its states in order ending with that one finish, its completion handler ran
/// once, its body ran at most once and never before every dependency had finished, and its
/// outcome is the one its body, its cancels, its dependencies' outcomes and its
/// `DependencyFailurePolicy` call for.
enum JobGraphStress {
    static var workers: Int { 4 }

    static func run(_ options: StressOptions) -> StressResult {
        let session = StressSession(name: "jobs", options: options)
        var round = 0
        while session.shouldContinue {
            round += 1
            var random = SeededGenerator.fresh()
            let clock = LogicalClock()
            let records = makeGraph(round: round, size: Int.random(in: 30...80, using: &random), using: &random)
            let jobs = records.map { $0.makeJob(clock: clock) }
            for record in records {
                for dependency in record.dependencies {
                    do {
                        try jobs[record.index].addDependency(jobs[dependency])
                    } catch {
                        session.violations.report("round \(round): addDependency on an acyclic graph threw \(error)")
                    }
                }
            }
            for (record, job) in zip(records, jobs) { record.watch(job, clock: clock) }

            let queue = JobQueue(name: "stress round \(round)", maxConcurrentJobs: workers)
            let threads = options.threads
            let currentRound = round
            let operations = session.team("jobs round \(round) adding and cancelling") { thread in
                addAndCancel(
                    jobs: jobs, records: records, queue: queue, thread: thread, threads: threads, clock: clock,
                    session: session, round: currentRound)
            }
            guard let operations else { break }
            session.countOperations(operations.reduce(0, +))
            guard ThreadTeam.wait(timeout: options.hangTimeout, for: { queue.waitUntilAllJobsAreFinished() }) else {
                let unfinished = zip(records, jobs).filter { !$1.isFinished }.map { "\($0.name) (\($1.state))" }
                session.violations.report(
                    "round \(round): waitUntilAllJobsAreFinished did not return within \(options.hangTimeout); "
                        + "unfinished: \(unfinished.joined(separator: ", "))")
                break
            }
            for problem in audit(records, jobs) {
                session.violations.report("round \(round): \(problem)")
            }
            if queue.jobCount != 0 {
                session.violations.report(
                    "round \(round): the queue still counts \(queue.jobCount) jobs after the wait")
            }
            session.countHistory()
        }
        return session.result()
    }

    private static func makeGraph(round: Int, size: Int, using random: inout SeededGenerator) -> [JobRecord] {
        (0..<size).map { index in
            let dependencyCount = index == 0 ? 0 : Int.random(in: 0...min(3, index), using: &random)
            let dependencies = Array((0..<index).shuffled(using: &random).prefix(dependencyCount)).sorted()
            return JobRecord(
                index: index, name: "r\(round)j\(index)", dependencies: dependencies,
                policy: random.chance(70) ? .cancel : .run, fails: random.chance(15),
                work: random.chance(30) ? Int.random(in: 100...2_000, using: &random) : 0)
        }
    }

    /// One thread's part: add its share of the jobs (every `threads`-th) in random order, and
    /// cancel a random job now and then. Returns the operations done.
    private static func addAndCancel(
        jobs: [Job], records: [JobRecord], queue: JobQueue, thread: Int, threads: Int, clock: LogicalClock,
        session: StressSession, round: Int
    ) -> Int {
        var random = SeededGenerator.fresh()
        var mine = Array(stride(from: thread, to: jobs.count, by: threads)).shuffled(using: &random)
        var operations = 0
        while !mine.isEmpty || random.chance(50) {
            operations += 1
            if mine.isEmpty || random.chance(12) {
                let victim = Int.random(in: 0..<jobs.count, using: &random)
                let start = clock.tick()
                jobs[victim].cancel()
                records[victim].cancelled(start: start, end: clock.tick())
            } else {
                let index = mine.removeLast()
                do {
                    try queue.add(jobs[index])
                } catch {
                    session.violations.report("round \(round): adding \(records[index].name) threw \(error)")
                }
            }
        }
        return operations
    }

    /// Every problem with every job, now that the queue is empty.
    private static func audit(_ records: [JobRecord], _ jobs: [Job]) -> [String] {
        var problems: [String] = []
        var outcomes: [JobOutcome?] = []
        for (record, job) in zip(records, jobs) {
            guard case .finished(let outcome) = job.state else {
                problems.append("\(record.name) is \(job.state) after the queue emptied")
                outcomes.append(nil)
                continue
            }
            outcomes.append(outcome)
        }
        for (record, outcome) in zip(records, outcomes) {
            guard let outcome else { continue }
            let dependencies = record.dependencies.map { (records[$0], outcomes[$0]) }
            problems += record.audit(outcome: outcome, dependencies: dependencies).map { "\(record.name): \($0)" }
        }
        return problems
    }

    /// The error a job's body throws when the plan says it fails.
    struct InjectedFailure: Error, CustomStringConvertible {
        var job: String
        var description: String { "injected failure in \(job)" }
    }
}

/// One job of a stress graph: its plan and everything seen of it. Ticks come from the round's
/// logical clock, so "finished before started" compares across threads.
final class JobRecord: Sendable {
    let index: Int
    let name: String
    let dependencies: [Int]
    let policy: DependencyFailurePolicy
    /// Whether the body throws.
    let fails: Bool
    /// Spin iterations in the body, so that jobs overlap and cancels land while they run.
    let work: Int

    private let bodyRuns = ManagedAtomic<Int>(0)
    private let bodyStart = ManagedAtomic<UInt64>(0)
    private let bodyEnd = ManagedAtomic<UInt64>(0)
    /// Whether the body saw `isCancelled` when it started.
    private let sawCancellation = ManagedAtomic<Bool>(false)
    /// Where the body's spin leaves its result, so the optimiser keeps the spin.
    private let workResult = ManagedAtomic<UInt64>(0)
    private let completions = ManagedAtomic<Int>(0)
    private let completionTick = ManagedAtomic<UInt64>(0)
    private let seen = Protected(Seen())

    private struct Seen {
        var states: [JobState] = []
        var finishedTick: UInt64 = 0
        var cancels: [(start: UInt64, end: UInt64)] = []
    }

    init(index: Int, name: String, dependencies: [Int], policy: DependencyFailurePolicy, fails: Bool, work: Int) {
        self.index = index
        self.name = name
        self.dependencies = dependencies
        self.policy = policy
        self.fails = fails
        self.work = work
    }

    func makeJob(clock: LogicalClock) -> Job {
        let job = StressJob(record: self, clock: clock)
        job.dependencyFailurePolicy = policy
        return job
    }

    /// The body: counts the run, ticks around it, spins, and fails if planned to.
    fileprivate func body(of job: Job, clock: LogicalClock) throws {
        bodyRuns.wrappingIncrement(ordering: .relaxed)
        bodyStart.store(clock.tick(), ordering: .relaxed)
        // Read after the start tick: a cancel that returned before that tick must show here.
        sawCancellation.store(job.isCancelled, ordering: .relaxed)
        var sink = UInt64(truncatingIfNeeded: index)
        for step in 0..<work { sink = sink &* 6_364_136_223_846_793_005 &+ UInt64(step) }
        workResult.store(sink, ordering: .relaxed)
        bodyEnd.store(clock.tick(), ordering: .relaxed)
        if fails { throw JobGraphStress.InjectedFailure(job: name) }
    }

    /// Registers the observer and completion handler (before the job is added).
    func watch(_ job: Job, clock: LogicalClock) {
        job.observe { [seen] state in
            let tick = state.isFinished ? clock.tick() : 0
            seen.write {
                $0.states.append(state)
                if state.isFinished { $0.finishedTick = tick }
            }
        }
        job.completion = { [completions, completionTick] _ in
            completionTick.store(clock.tick(), ordering: .relaxed)
            completions.wrappingIncrement(ordering: .relaxed)
        }
    }

    func cancelled(start: UInt64, end: UInt64) {
        seen.write { $0.cancels.append((start, end)) }
    }

    var finishedTick: UInt64 { seen.read { $0.finishedTick } }
    var completedTick: UInt64 { completionTick.load(ordering: .relaxed) }

    /// The problems with this job, given its final outcome and its dependencies' records and
    /// outcomes (nil when a dependency never finished, which is reported on its own).
    func audit(outcome: JobOutcome, dependencies: [(JobRecord, JobOutcome?)]) -> [String] {
        var problems: [String] = []
        let seen = seen.value
        let runs = bodyRuns.load(ordering: .relaxed)
        let ran = runs > 0

        // Exactly one finished state, last, after states that only move forward.
        let finishes = seen.states.filter(\.isFinished)
        if finishes.count != 1 || seen.states.last.map(\.isFinished) != true {
            problems.append("observers saw \(seen.states) instead of one finished state at the end")
        } else if "\(finishes[0])" != "\(JobState.finished(outcome))" {
            problems.append("observers saw \(finishes[0]) but the job's state is finished(\(outcome))")
        }
        let ranks = seen.states.map(Self.rank)
        if zip(ranks, ranks.dropFirst()).contains(where: { $0 > $1 }) {
            problems.append("observers saw its states go backwards: \(seen.states)")
        }
        if ran != seen.states.contains(where: { if case .executing = $0 { true } else { false } }) {
            problems.append("the body ran \(runs) times but observers saw \(seen.states)")
        }
        let completionCount = completions.load(ordering: .relaxed)
        if completionCount != 1 { problems.append("the completion handler ran \(completionCount) times") }
        if completedTick < seen.finishedTick {
            problems.append("the completion handler ran before observers saw the job finish")
        }
        if runs > 1 { problems.append("the body ran \(runs) times") }

        let failedDependencies = dependencies.filter { _, outcome in outcome.map { !$0.isSucceeded } ?? false }
        let cancelReturned = seen.cancels.map(\.end).min()
        let cancelStarted = seen.cancels.map(\.start).min()
        if ran {
            let start = bodyStart.load(ordering: .relaxed)
            let end = bodyEnd.load(ordering: .relaxed)
            for (dependency, _) in dependencies
            where dependency.finishedTick > start || dependency.completedTick > start {
                problems.append("the body started before dependency \(dependency.name) had finished")
            }
            if policy == .cancel, let (dependency, dependencyOutcome) = failedDependencies.first {
                problems.append(
                    "ran (policy .cancel) though dependency \(dependency.name) ended \(dependencyOutcome!)")
            }
            // A cancel may land between the job's start and its body's first line; the body
            // must then see it.
            if let cancelReturned, cancelReturned < start, !sawCancellation.load(ordering: .relaxed) {
                problems.append("the body started after a cancel() had returned, and isCancelled was false")
            }
            if end > seen.finishedTick { problems.append("observers saw it finish before its body returned") }
            let expected: String
            if fails {
                expected = "failed(\(JobGraphStress.InjectedFailure(job: name)))"
            } else if let cancelReturned, cancelReturned < end {
                expected = "cancelled(requested)"
            } else if let cancelStarted, cancelStarted < seen.finishedTick {
                // The cancel raced the end of the body: either outcome is right.
                expected = "\(outcome)" == "cancelled(requested)" ? "cancelled(requested)" : "succeeded"
            } else {
                expected = "succeeded"
            }
            if "\(outcome)" != expected { problems.append("ended \(outcome), expected \(expected)") }
        } else {
            guard case .cancelled(let reason) = outcome else {
                problems.append("never ran but ended \(outcome)")
                return problems
            }
            var allowed: Set<String> = []
            if let cancelStarted, cancelStarted < seen.finishedTick { allowed.insert("requested") }
            if policy == .cancel {
                for (dependency, dependencyOutcome) in failedDependencies {
                    allowed.insert(Self.propagatedReason(from: dependency.name, dependencyOutcome!))
                }
            }
            if !allowed.contains("\(reason)") {
                problems.append(
                    "never ran and was cancelled (\(reason)); the reasons that fit are \(allowed.sorted()) "
                        + "(policy \(policy), dependencies ended \(dependencies.map { "\($0.0.name): \($0.1.map { "\($0)" } ?? "-")" }))"
                )
            }
        }
        return problems
    }

    /// What a dependent with policy `.cancel` must give as its reason when `dependency` ended
    /// with `outcome`: the failure or cancel where the trouble started, passed on unchanged.
    private static func propagatedReason(from dependency: String, _ outcome: JobOutcome) -> String {
        switch outcome {
        case .succeeded: ""
        case .failed(let error): "\(JobCancellationReason.dependencyFailed(job: dependency, error: error))"
        case .cancelled(.requested): "\(JobCancellationReason.dependencyCancelled(job: dependency))"
        case .cancelled(let upstream): "\(upstream)"
        }
    }

    private static func rank(_ state: JobState) -> Int {
        switch state {
        case .pending: 0
        case .ready: 1
        case .executing: 2
        case .finished: 3
        }
    }
}

/// A custom job kind, as an app subclasses `Job`: its `main()` runs the record's body.
private final class StressJob: Job {
    private let record: JobRecord
    private let clock: LogicalClock

    init(record: JobRecord, clock: LogicalClock) {
        self.record = record
        self.clock = clock
        super.init(name: record.name)
    }

    override func main() throws {
        try record.body(of: self, clock: clock)
    }
}

// Job's own state is guarded by the job graph's lock (JobGraph.lock); the two fields added here
// are immutable references to Sendable objects, so they need no lock.
extension StressJob: @unchecked Sendable {}
