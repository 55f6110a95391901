import BatonJobs
import BatonLocks
import Dispatch
import Foundation
import Testing

@Suite struct LifecycleTests {
    // MARK: Running by hand

    @Test func startRunsAReadyJobOnTheCallingThread() throws {
        let caller = pthread_self()
        let sameThread = Protected(false)
        let job = BlockJob(name: "manual") { sameThread.write { $0 = pthread_equal(pthread_self(), caller) != 0 } }
        #expect(job.isReady)
        try job.start()
        #expect(sameThread.value)
        #expect(job.outcome?.isSucceeded == true)
        #expect(throws: JobError.alreadyFinished(job: "manual")) { try job.start() }
    }

    @Test func startMisuseThrowsInsteadOfHanging() throws {
        let dependency = BlockJob(name: "dependency") {}
        let waiting = BlockJob(name: "waiting") {}
        try waiting.addDependency(dependency)
        #expect(throws: JobError.notReady(job: "waiting", unfinishedDependencies: 1)) { try waiting.start() }

        let queue = JobQueue(name: "owner")
        queue.isSuspended = true
        let queued = BlockJob(name: "queued") {}
        try queue.add(queued)
        #expect(throws: JobError.ownedByQueue(job: "queued", queue: "owner")) { try queued.start() }
        queue.cancelAll()
        #expect(drain(queue))

        // Starting a job from inside its own body: it is executing.
        let inner = Protected<JobError?>(nil)
        let selfStarting = SelfStartingJob(inner)
        try selfStarting.start()
        #expect(inner.value == .alreadyExecuting(job: "self-starting"))
    }

    @Test func settingCompletionAfterStartIsAPreconditionFailureNamingTheJob() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let job = BlockJob(name: "finished-job") {}
            try? job.start()
            job.completion = { _ in }
        }
        // An optimised build drops a precondition's message: there only the stop is checked.
        #if DEBUG
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("finished-job"), "stderr: \(message)")
        #expect(message.contains("already finished"))
        #else
        _ = result
        #endif
    }

    // MARK: Cancellation

    @Test func cancelBeforeStartFinishesWithoutRunning() throws {
        let ran = Counter()
        let queue = JobQueue(name: "cancel-before")
        queue.isSuspended = true
        let queued = BlockJob(name: "queued") { ran.increment() }
        try queue.add(queued)
        queued.cancel()
        guard case .cancelled(.requested)? = queued.outcome else {
            Issue.record("\(queued.state)")
            return
        }
        #expect(queue.jobCount == 0)

        let outside = BlockJob(name: "outside") { ran.increment() }
        outside.cancel()
        #expect(outside.isCancelled && !outside.isFinished)  // finishes when added or started
        try queue.add(outside)
        #expect(outside.outcome.map { "\($0)" } == "cancelled(requested)")
        queue.isSuspended = false
        #expect(drain(queue))
        #expect(ran.value == 0)
    }

    @Test func cancelDuringMainIsSeenByTheBody() throws {
        let queue = JobQueue(name: "cancel-during")
        let entered = DispatchSemaphore(value: 0)
        let sawCancel = Protected(false)
        let job = CancellableJob(entered: entered, sawCancel: sawCancel)
        try queue.add(job)
        #expect(entered.wait(timeout: .now() + testDeadline) == .success)
        job.cancel()
        #expect(drain(queue))
        #expect(sawCancel.value)
        #expect(job.outcome.map { "\($0)" } == "cancelled(requested)")
    }

    @Test func asyncJobSeesTaskCancellation() async throws {
        let queue = JobQueue(name: "async-cancel", maxConcurrentJobs: 1)
        let started = AsyncStream<Void>.makeStream()
        let job = AsyncJob<Int>(name: "sleeper") {
            started.continuation.yield()
            try await Task.sleep(for: .seconds(3600))  // only a cancellation ends it
            return 1
        }
        try queue.add(job)
        var iterator = started.stream.makeAsyncIterator()
        await iterator.next()
        // The async body holds the queue's only slot but not a thread: a blocking job would
        // still need the slot, so the queue is full until the cancellation.
        #expect(queue.jobCount == 1)
        job.cancel()
        await #expect(throws: JobError.self) { try await job.value }
        guard case .cancelled(.requested)? = job.outcome else {
            Issue.record("\(job.state)")
            return
        }
        // The slot came back: the queue runs the next job.
        let next = ResultJob<Int, Never> { 2 }
        try queue.add(next)
        #expect(try await next.value == 2)
    }

    @Test func asyncJobAwaitsWithoutHoldingAWorker() async throws {
        let queue = JobQueue(name: "async", maxConcurrentJobs: 4)
        let jobs = (0..<50).map { index in
            AsyncJob { () async throws -> Int in
                await Task.yield()
                return index * 2
            }
        }
        try queue.add(jobs)
        var total = 0
        for job in jobs { total += try await job.value }
        #expect(total == (0..<50).reduce(0) { $0 + $1 * 2 })
        await queue.allJobsFinished()
        #expect(queue.jobCount == 0)
    }

    @Test func isExecutingIsTrueOnlyWhileTheBodyRuns() throws {
        let queue = JobQueue(name: "executing")
        let seenInside = Log<Bool>()
        let holder = Protected<BlockJob?>(nil)
        let job = BlockJob(name: "observed") { seenInside.append(holder.value?.isExecuting ?? false) }
        holder.write { $0 = job }
        #expect(!job.isExecuting)
        try queue.add(job)
        #expect(drain(queue))
        #expect(seenInside.all == [true])
        #expect(!job.isExecuting)
        #expect(job.isFinished)
    }

    // MARK: Observation and completion

    @Test func observersSeeEveryTransitionInOrder() async throws {
        let queue = JobQueue(name: "observe")
        let dependency = BlockJob(name: "dependency") {}
        let job = BlockJob(name: "observed") {}
        let seen = Log<String>()
        job.observe { seen.append($0.tag) }  // current state first: ready
        try job.addDependency(dependency)
        let stream = job.states
        try queue.add(job)
        try queue.add(dependency)
        var streamed: [String] = []
        for await state in stream { streamed.append(state.tag) }
        await job.finished()
        #expect(seen.all == ["ready", "pending", "ready", "executing", "succeeded"])
        #expect(streamed == ["pending", "ready", "executing", "succeeded"])

        let late = Log<String>()
        job.observe { late.append($0.tag) }  // after the end: just the finished state
        #expect(late.all == ["succeeded"])
    }

    /// The completion handler of a job has returned before any of its dependents starts, and
    /// the finished state reached its observers before that.
    @Test(arguments: [1, 2, 8])
    func completionRunsBeforeDependents(maxConcurrentJobs: Int) throws {
        let queue = JobQueue(name: "completion", maxConcurrentJobs: maxConcurrentJobs)
        let events = Log<String>()
        var jobs: [Job] = []
        for pair in 0..<300 {
            let first = BlockJob(name: "first\(pair)") {}
            first.observe { if $0.isFinished { events.append("finished \(pair)") } }
            first.completion = { _ in events.append("completion \(pair)") }
            let second = BlockJob(name: "second\(pair)") { events.append("start \(pair)") }
            let third = BlockJob(name: "third\(pair)") { events.append("start \(pair)") }
            try second.addDependency(first)
            try third.addDependency(first)
            jobs += [second, third, first]
        }
        try queue.add(jobs)
        #expect(drain(queue))
        let log = events.all
        #expect(log.count == 300 * 4)
        for pair in 0..<300 {
            let finished = log.firstIndex(of: "finished \(pair)")
            let completion = log.firstIndex(of: "completion \(pair)")
            let start = log.firstIndex(of: "start \(pair)")
            guard let finished, let completion, let start else {
                Issue.record("pair \(pair) missing events")
                continue
            }
            #expect(finished < completion && completion < start, "pair \(pair)")
        }
    }

    // MARK: Waiting

    @Test func blockingAndAsyncWaits() async throws {
        let queue = JobQueue(name: "waits", maxConcurrentJobs: 2)
        let counter = Counter()
        let jobs = (0..<100).map { _ in BlockJob { counter.increment() } }
        try queue.add(jobs)
        await jobs[0].finished()
        finishes("waitUntilFinished") { jobs[99].waitUntilFinished() }
        #expect(jobs[99].isFinished)
        await queue.allJobsFinished()
        #expect(counter.value == 100)
        finishes("waitUntilAllJobsAreFinished on an empty queue") { queue.waitUntilAllJobsAreFinished() }
    }

    @Test func blockJobRunsEveryBlockAndFailsWithTheFirstError() throws {
        let counter = Counter()
        let job = BlockJob(name: "blocks") { counter.increment() }
        for index in 1..<8 {
            try job.addBlock {
                counter.increment()
                if index == 5 || index == 6 { throw TestError(id: index) }
            }
        }
        try job.start()
        #expect(counter.value == 8)
        guard case .failed(let error as TestError)? = job.outcome else {
            Issue.record("\(job.state)")
            return
        }
        #expect(error == TestError(id: 5))
        #expect(throws: JobError.alreadyFinished(job: "blocks")) { try job.addBlock {} }
    }
}

/// Starts itself from its own body, recording the error.
final class SelfStartingJob: Job, @unchecked Sendable {  // its only state is a Protected
    let error: Protected<JobError?>
    init(_ error: Protected<JobError?>) {
        self.error = error
        super.init(name: "self-starting")
    }
    override func main() throws {
        do throws(JobError) {
            try start()
        } catch {
            self.error.write { $0 = error }
        }
    }
}

/// Runs until it sees `isCancelled`, then stops early.
final class CancellableJob: Job, @unchecked Sendable {  // its state is a semaphore and a Protected
    let entered: DispatchSemaphore
    let sawCancel: Protected<Bool>
    init(entered: DispatchSemaphore, sawCancel: Protected<Bool>) {
        self.entered = entered
        self.sawCancel = sawCancel
        super.init(name: "cancellable")
    }
    override func main() throws {
        entered.signal()
        let end = Date().addingTimeInterval(testDeadline)
        while !isCancelled && Date() < end { usleep(100) }
        sawCancel.write { $0 = isCancelled }
    }
}
