import BatonJobs
import BatonLocks
import Dispatch
import Foundation
import Testing

/// Jobs with dependencies that are not (yet) in a queue: their dependencies do not hold them,
/// yet their state, cancellation and observers see those dependencies finish.
@Suite struct OutsideQueueTests {
    /// A job outside any queue reports pending, then ready once its dependency finished, both
    /// when it is observed and when it is only asked.
    @Test(.timeLimit(.minutes(1))) func stateFollowsDependenciesOutsideAQueue() throws {
        let queue = JobQueue(name: "outside-state")
        queue.isSuspended = true
        let dependency = BlockJob(name: "dependency") {}
        let observed = BlockJob(name: "observed") {}
        let asked = BlockJob(name: "asked") {}
        try observed.addDependency(dependency)
        try asked.addDependency(dependency)
        let seen = Log<String>()
        let becameReady = DispatchSemaphore(value: 0)
        observed.observe { state in
            seen.append(state.tag)
            if state.tag == "ready" { becameReady.signal() }
        }
        try queue.add(dependency)
        #expect(observed.state.tag == "pending")
        #expect(asked.state.tag == "pending")
        #expect(!observed.isReady && !asked.isReady)
        queue.isSuspended = false
        #expect(drain(queue))
        #expect(becameReady.wait(timeout: .now() + testDeadline) == .success)
        #expect(seen.all == ["pending", "ready"])
        #expect(observed.isReady && asked.isReady)
        try asked.start()
        #expect(asked.outcome?.isSucceeded == true)
    }

    /// A job outside any queue whose dependency failed is cancelled by it, naming it, before it
    /// is added; added, it finishes as cancelled without running. With policy `.run` set
    /// before it is added, it runs.
    @Test func failedDependencyCancelsAJobAddedAfterwards() throws {
        let queue = JobQueue(name: "outside-failure")
        let failing = BlockJob(name: "failing") { throw TestError(id: 7) }
        let cancelled = BlockJob(name: "cancelled") { Issue.record("a cancelled job ran") }
        let runs = Counter()
        let tolerant = BlockJob(name: "tolerant") { runs.increment() }
        try cancelled.addDependency(failing)
        try tolerant.addDependency(failing)
        try queue.add(failing)
        #expect(drain(queue))
        #expect(cancelled.isCancelled)
        #expect(tolerant.isCancelled)
        tolerant.dependencyFailurePolicy = .run
        #expect(!tolerant.isCancelled)
        try queue.add([cancelled, tolerant])
        #expect(drain(queue))
        guard case .cancelled(.dependencyFailed(let culprit, let cause as TestError))? = cancelled.outcome else {
            Issue.record("cancelled: \(cancelled.state)")
            return
        }
        #expect(culprit == "failing")
        #expect(cause == TestError(id: 7))
        #expect(tolerant.outcome?.isSucceeded == true)
        #expect(runs.value == 1)
    }

    /// `start()` on a job whose dependency failed while it was outside a queue finishes it as
    /// cancelled; one whose dependency has not finished throws, naming how many are left.
    @Test func startSeesDependenciesThatFinishedOutsideAQueue() throws {
        let failing = BlockJob(name: "failing") { throw TestError(id: 1) }
        let waiting = BlockJob(name: "waiting") {}
        let other = BlockJob(name: "other") {}
        try waiting.addDependency(failing)
        try waiting.addDependency(other)
        #expect(throws: JobError.notReady(job: "waiting", unfinishedDependencies: 2)) { try waiting.start() }
        try failing.start()
        #expect(throws: JobError.notReady(job: "waiting", unfinishedDependencies: 1)) { try waiting.start() }
        try other.start()
        try waiting.start()
        guard case .cancelled(.dependencyFailed(let culprit, _))? = waiting.outcome else {
            Issue.record("waiting: \(waiting.state)")
            return
        }
        #expect(culprit == "failing")
    }

    /// A dependency in a queue does not keep a dependent that is outside every queue: the
    /// dependent is freed when its owner drops it, and the dependency still runs.
    @Test func aDependencyDoesNotKeepADependentOutsideAQueue() throws {
        let queue = JobQueue(name: "outside-memory")
        queue.isSuspended = true
        let dependency = BlockJob(name: "dependency") {}
        weak var dropped: Job?
        do {
            let dependent = BlockJob(name: "dependent") { Issue.record("a dropped job ran") }
            try dependent.addDependency(dependency)
            dropped = dependent
            try queue.add(dependency)
        }
        #expect(dropped == nil)
        queue.isSuspended = false
        #expect(drain(queue))
        #expect(dependency.outcome?.isSucceeded == true)
    }

    /// A job in a queue that waits for a job outside any queue is kept by its queue and runs
    /// once that dependency is added and finishes, even when the caller dropped both.
    @Test(.timeLimit(.minutes(1))) func aQueuedDependentOfAJobAddedLaterRuns() throws {
        let queue = JobQueue(name: "outside-later")
        let ran = Log<String>()
        let dependency = BlockJob(name: "dependency") { ran.append("dependency") }
        do {
            let dependent = BlockJob(name: "dependent") { ran.append("dependent") }
            try dependent.addDependency(dependency)
            try queue.add(dependent)
            #expect(dependent.state.tag == "pending")
        }
        #expect(queue.jobCount == 1)
        try queue.add(dependency)
        #expect(drain(queue))
        #expect(ran.all == ["dependency", "dependent"])
    }

    /// Edges added in any order between jobs outside a queue still find every cycle, with the
    /// jobs on it in order.
    @Test func cyclesFoundWhateverOrderTheEdgesCameIn() throws {
        let jobs = (0..<6).map { index in BlockJob(name: "j\(index)") {} }
        // j(i+1) waits for j(i), edges added in a scrambled order.
        for index in [3, 0, 4, 2, 1] { try jobs[index + 1].addDependency(jobs[index]) }
        #expect(throws: JobError.dependencyCycle(cycle: ["j2", "j5", "j4", "j3"])) {
            try jobs[2].addDependency(jobs[5])
        }
        #expect(throws: JobError.dependencyCycle(cycle: ["j0", "j5", "j4", "j3", "j2", "j1"])) {
            try jobs[0].addDependency(jobs[5])
        }
        // Not a cycle: j5 waiting for j0 again.
        try jobs[5].addDependency(jobs[0])
        let queue = JobQueue(name: "scrambled")
        try queue.add(jobs.reversed())
        #expect(drain(queue))
        #expect(jobs.allSatisfy { $0.outcome?.isSucceeded == true })
    }

    /// A dependency that has finished but whose completion handler is still running is not done
    /// yet: a dependent linked meanwhile (added to a queue, observed or given the edge then)
    /// waits for the handler to return, then runs, exactly once.
    @Test(.timeLimit(.minutes(1)), arguments: ["added", "observed then added", "edge added late"])
    func aDependencyIsDoneOnlyOnceItsCompletionReturned(how: String) throws {
        let queue = JobQueue(name: "outside-completion", maxConcurrentJobs: 2)
        let log = Log<String>()
        let inCompletion = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let dependency = BlockJob(name: "dependency") {}
        dependency.completion = { _ in
            inCompletion.signal()
            release.wait()
            log.append("completion returned")
        }
        let dependent = BlockJob(name: "dependent") { log.append("dependent ran") }
        if how != "edge added late" { try dependent.addDependency(dependency) }
        if how == "observed then added" { dependent.observe { _ in } }
        try queue.add(dependency)
        #expect(inCompletion.wait(timeout: .now() + testDeadline) == .success)
        #expect(dependency.isFinished)
        if how == "edge added late" { try dependent.addDependency(dependency) }
        try queue.add(dependent)
        #expect(dependent.state.tag == "pending")
        release.signal()
        #expect(drain(queue))
        #expect(log.all == ["completion returned", "dependent ran"])
        #expect(dependent.outcome?.isSucceeded == true)
    }
}
