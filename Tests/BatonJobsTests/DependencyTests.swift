import BatonJobs
import BatonLocks
import Dispatch
import Foundation
import Testing

@Suite struct DependencyTests {
    // MARK: Cycles

    @Test func selfDependencyThrowsAndNamesTheJob() {
        let job = BlockJob(name: "loner") {}
        #expect(throws: JobError.selfDependency(job: "loner")) { try job.addDependency(job) }
        #expect(job.dependencies.isEmpty)
        #expect(job.isReady)
    }

    @Test func cycleThrowsAndNamesEveryJobOnIt() throws {
        let a = BlockJob(name: "A") {}
        let b = BlockJob(name: "B") {}
        let c = BlockJob(name: "C") {}
        try a.addDependency(b)  // A waits for B
        try b.addDependency(c)  // B waits for C
        #expect(throws: JobError.dependencyCycle(cycle: ["C", "A", "B"])) { try c.addDependency(a) }
        #expect(throws: JobError.dependencyCycle(cycle: ["B", "A"])) { try b.addDependency(a) }
        let error = JobError.dependencyCycle(cycle: ["C", "A", "B"])
        #expect(error.description.contains("C → A → B → C"))
        // Nothing was added by the failed calls: the graph still runs to the end.
        let queue = JobQueue(name: "cycle")
        try queue.add([a, b, c])
        #expect(drain(queue))
        #expect([a, b, c].allSatisfy { $0.outcome?.isSucceeded == true })
    }

    /// Both search directions find the cycle, whichever side is smaller.
    @Test func longCycleFoundFromEitherSide() throws {
        let chain = (0..<500).map { index in BlockJob(name: "j\(index)") {} }
        for index in 1..<chain.count { try chain[index].addDependency(chain[index - 1]) }
        // j0 waits for j499 would close a cycle through all 500 jobs.
        let error = #expect(throws: JobError.self) { try chain[0].addDependency(chain[499]) }
        guard let error, error.code == .dependencyCycle, let cycle = error.cycle else {
            Issue.record("expected a cycle, got \(String(describing: error))")
            return
        }
        #expect(cycle.count == 500)
        #expect(cycle.first == "j0")
        #expect(cycle[1] == "j499")
        #expect(cycle.last == "j1")
        // A side branch: x waits for j250, and j0 waiting for x closes a cycle too.
        let x = BlockJob(name: "x") {}
        try x.addDependency(chain[250])
        #expect(throws: JobError.self) { try chain[0].addDependency(x) }
        // Not a cycle: j499 waiting for x.
        try chain[499].addDependency(x)
    }

    /// Two threads adding A→B and B→A at the same time: exactly one succeeds.
    @Test func concurrentOppositeEdgesCannotBothSucceed() throws {
        for round in 0..<300 {
            let a = BlockJob(name: "A\(round)") {}
            let b = BlockJob(name: "B\(round)") {}
            let successes = Counter()
            let gate = DispatchGroup()
            let start = DispatchSemaphore(value: 0)
            for (from, to) in [(a, b), (b, a)] {
                gate.enter()
                DispatchQueue.global().async {
                    start.wait()
                    if (try? from.addDependency(to)) != nil { successes.increment() }
                    gate.leave()
                }
            }
            start.signal()
            start.signal()
            #expect(gate.wait(timeout: .now() + testDeadline) == .success)
            #expect(successes.value == 1)
        }
    }

    @Test func dependingOnAFinishedJobIsAllowedAndCannotCycle() throws {
        let first = BlockJob(name: "first") {}
        try first.start()
        let second = BlockJob(name: "second") {}
        try second.addDependency(first)
        #expect(second.isReady)
        try second.start()
        #expect(second.outcome?.isSucceeded == true)
        #expect(throws: JobError.alreadyFinished(job: "second")) { try second.addDependency(BlockJob {}) }
    }

    // MARK: Failure policy

    /// A fails; B (.cancel) and C (.cancel, below B) are cancelled naming A; D (.run) runs
    /// anyway, and E below it runs as D succeeded.
    @Test func failurePolicyAlongAThreeLevelGraph() throws {
        let ran = Log<String>()
        let a = BlockJob(name: "A") {
            ran.append("A")
            throw TestError(id: 1)
        }
        let b = BlockJob(name: "B") { ran.append("B") }
        let c = BlockJob(name: "C") { ran.append("C") }
        let d = BlockJob(name: "D") { ran.append("D") }
        let e = BlockJob(name: "E") { ran.append("E") }
        d.dependencyFailurePolicy = .run
        try b.addDependency(a)
        try c.addDependency(b)
        try d.addDependency(a)
        try e.addDependency(d)
        let queue = JobQueue(name: "policy", maxConcurrentJobs: 2)
        try queue.add([e, d, c, b, a])
        #expect(drain(queue))
        #expect(Set(ran.all) == ["A", "D", "E"])
        guard case .failed(let error as TestError)? = a.outcome else {
            Issue.record("A: \(a.state)")
            return
        }
        #expect(error == TestError(id: 1))
        for job in [b, c] {
            guard case .cancelled(.dependencyFailed(let culprit, let cause as TestError))? = job.outcome else {
                Issue.record("\(job): \(job.state)")
                continue
            }
            #expect(culprit == "A")
            #expect(cause == TestError(id: 1))
            #expect(job.isCancelled)
        }
        #expect(d.outcome?.isSucceeded == true)
        #expect(e.outcome?.isSucceeded == true)
    }

    @Test func cancellingADependencyCancelsDownstreamWithItsName() throws {
        let queue = JobQueue(name: "cancel-down")
        queue.isSuspended = true
        let a = BlockJob(name: "A") {}
        let b = BlockJob(name: "B") {}
        let c = BlockJob(name: "C") {}
        try b.addDependency(a)
        try c.addDependency(b)
        try queue.add([a, b, c])
        a.cancel()
        guard case .cancelled(.requested)? = a.outcome,
            case .cancelled(.dependencyCancelled(let named))? = b.outcome,
            case .cancelled(.dependencyCancelled(let root))? = c.outcome
        else {
            Issue.record("states: \(a.state) \(b.state) \(c.state)")
            return
        }
        #expect(named == "A")
        #expect(root == "A")
        #expect(queue.jobCount == 0)
    }

    // MARK: Results along edges

    @Test func resultsFlowAlongEdges() async throws {
        let two = ResultJob<Int, Never>(name: "two") { 2 }
        let three = ResultJob<Int, Never>(name: "three") { 3 }
        let words = ResultJob<String, Never>(name: "words") { "not an Int" }
        // A dependent reads a dependency it captured, with its typed result.
        let reader = ResultJob(name: "reader") { () throws(JobError) -> Int in
            try two.result.get() * 10
        }
        try reader.addDependency(two)
        // Or reads every dependency that produced an Int, in the order added.
        let total = Protected(0)
        let summing = SummingJob(total)
        try summing.addDependency(two)
        try summing.addDependency(words)
        try summing.addDependency(three)
        let queue = JobQueue(name: "results")
        try queue.add([two, three, words, reader, summing])
        #expect(try await reader.value == 20)
        await summing.finished()
        #expect(total.value == 502)
        #expect(summing.dependencies.isEmpty)  // dropped once finished
    }

    @Test func typedErrorsAndCancelledResults() async throws {
        let failing = ResultJob(name: "failing") { () throws(TestError) -> Int in throw TestError(id: 7) }
        try failing.start()
        #expect(try failing.result == .failure(TestError(id: 7)))
        await #expect(throws: TestError(id: 7)) { try await failing.value }

        let notYet = ResultJob<Int, Never>(name: "later") { 1 }
        #expect(throws: JobError.notFinished(job: "later")) { try notYet.result }

        let cancelled = ResultJob<Int, Never>(name: "cancelled") { 1 }
        cancelled.cancel()
        try cancelled.start()
        #expect(throws: JobError.cancelled(job: "cancelled", reason: "requested")) { try cancelled.result }
        await #expect(throws: JobError.self) { try await cancelled.value }
    }

    // MARK: Across queues

    @Test func dependenciesAcrossQueuesInBothOrders() throws {
        let left = JobQueue(name: "left", maxConcurrentJobs: 1)
        let right = JobQueue(name: "right", maxConcurrentJobs: 1)
        let order = Log<String>()
        for round in 0..<200 {
            let upstream = BlockJob(name: "up\(round)") { order.append("up\(round)") }
            let downstream = BlockJob(name: "down\(round)") { order.append("down\(round)") }
            if round % 2 == 0 {
                try downstream.addDependency(upstream)  // before either is in a queue
                try right.add(downstream)
                try left.add(upstream)
            } else {
                try left.add(upstream)
                try right.add(downstream)  // may already be running: add the edge quickly after
                try? downstream.addDependency(upstream)
            }
        }
        #expect(drain(left))
        #expect(drain(right))
        let log = order.all
        for round in stride(from: 0, to: 200, by: 2) {
            let up = log.firstIndex(of: "up\(round)")
            let down = log.firstIndex(of: "down\(round)")
            #expect(up != nil && down != nil && up! < down!, "round \(round)")
        }
        #expect(log.count == 400)
    }

    /// A job with several dependencies stays pending until the last of them finishes, however
    /// many of the others have, with free workers beside it; then it runs once.
    @Test(.timeLimit(.minutes(1))) func aJobWaitsForTheLastOfItsDependencies() throws {
        let queue = JobQueue(name: "last dependency", maxConcurrentJobs: 4)
        let gate = DispatchSemaphore(value: 0)
        let log = Log<String>()
        let held = BlockJob(name: "held") {
            gate.wait()
            log.append("held")
        }
        let quick = (0..<3).map { index in BlockJob(name: "quick \(index)") { log.append("quick") } }
        let dependent = BlockJob(name: "dependent") { log.append("dependent") }
        for dependency in quick + [held] { try dependent.addDependency(dependency) }
        try queue.add(quick + [held, dependent])
        #expect(eventually { quick.allSatisfy(\.isFinished) && held.isExecuting })
        // Three of four finished and three workers idle: the dependent must still wait.
        #expect(dependent.state.tag == "pending")
        #expect(!log.all.contains("dependent"))
        gate.signal()
        #expect(drain(queue))
        #expect(log.all.last == "dependent")
        #expect(log.all.filter { $0 == "dependent" }.count == 1)
        #expect(dependent.outcome?.isSucceeded == true)
    }

    @Test func removingTheLastDependencyMakesAJobReady() throws {
        let queue = JobQueue(name: "remove")
        let never = BlockJob(name: "never") {}
        let job = BlockJob(name: "job") {}
        try job.addDependency(never)
        try queue.add(job)
        #expect(job.state.tag == "pending")
        job.removeDependency(never)
        #expect(drain(queue))
        #expect(job.outcome?.isSucceeded == true)
        #expect(never.state.tag == "ready")
    }

    // MARK: Order

    /// `dependencies` lists the jobs in the order they were added, and keeps that order when one
    /// is removed; `dependencyValues` gives the values in that order too, whatever order the
    /// jobs finished in, and leaves out a job that has no value.
    @Test func dependenciesAndTheirValuesKeepTheOrderTheyWereAddedIn() throws {
        let parts = [("c", 3), ("a", 1), ("d", 4), ("b", 2)].map { name, value in
            ResultJob<Int, Never>(name: name) { value }
        }
        let plain = BlockJob(name: "plain") {}
        let seen = Protected<[Int]>([])
        let collect = CollectingJob(seen)
        for part in parts { try collect.addDependency(part) }
        #expect(collect.dependencies.map(\.name) == ["c", "a", "d", "b"])
        collect.removeDependency(parts[2])
        #expect(collect.dependencies.map(\.name) == ["c", "a", "b"])
        try collect.addDependency(plain)
        #expect(collect.dependencies.map(\.name) == ["c", "a", "b", "plain"])

        // One at a time, in the reverse of the order added: b, d, a, c finish first to last.
        let queue = JobQueue(name: "order", maxConcurrentJobs: 1)
        try queue.add(Array(parts.reversed()) + [plain, collect])
        #expect(drain(queue))
        #expect(collect.outcome?.isSucceeded == true)
        #expect(seen.value == [3, 1, 2])
    }
}

/// Sums the Int results of its dependencies: the typed accessor from a `Job` subclass.
final class SummingJob: Job, @unchecked Sendable {  // its only state is a Protected
    let total: Protected<Int>
    init(_ total: Protected<Int>) {
        self.total = total
        super.init(name: "summing")
    }
    override func main() throws {
        let values = dependencyValues(Int.self)
        total.write { $0 = values.reduce(0, +) * 100 + values.count }
    }
}

/// Keeps the Int values of its dependencies, as `dependencyValues` gives them.
final class CollectingJob: Job, @unchecked Sendable {  // its only state is a Protected
    let seen: Protected<[Int]>
    init(_ seen: Protected<[Int]>) {
        self.seen = seen
        super.init(name: "collect")
    }
    override func main() throws {
        let values = dependencyValues(Int.self)
        seen.write { $0 = values }
    }
}
