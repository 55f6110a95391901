import BatonLocks
import BatonTestSupport
import Clocks
import Dispatch
import Foundation
import Testing

@testable import BatonJobs

/// `JobQueue.shutDown(gracePeriod:clock:finishingQueuedJobs:)`: what each job's outcome is, that
/// the queue takes nothing after, and when the call returns. The grace period runs on a manual
/// clock; running jobs are held on gates, so nothing is inferred from how long anything took.
@Suite(.timeLimit(.minutes(1)), .offTheCooperativePool) struct ShutdownTests {
    /// A job that runs until its gate opens.
    final class Gated: Sendable {
        let gate = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let job: BlockJob

        init(_ name: String) {
            let gate = gate
            let started = started
            job = BlockJob(name: name) {
                started.signal()
                _ = gate.wait(timeout: .now() + .seconds(60))
            }
        }

        /// Waits (at most a minute) until the body runs.
        func waitUntilStarted() -> Bool { started.wait(timeout: .now() + .seconds(60)) == .success }
        func open() { gate.signal() }
    }

    /// An `AsyncJob` that runs until its task is cancelled: it sleeps on a clock nobody advances.
    static func untilCancelled(_ name: String, started: DispatchSemaphore) -> AsyncJob<Void> {
        let idle = TestClock()
        return AsyncJob(name: name) {
            started.signal()
            try await idle.sleep(for: .seconds(3600))
        }
    }

    /// A queue of one slot running `running`'s job; returns once the job runs.
    static func queue(_ name: String, running: Gated) throws -> JobQueue {
        let queue = JobQueue(name: name, maxConcurrentJobs: 1)
        try queue.add(running.job)
        #expect(running.waitUntilStarted())
        return queue
    }

    /// A queue of one slot running an ``untilCancelled(_:started:)`` job, with `queued` behind
    /// it; returns once the job runs.
    static func queueRunningStubborn(_ name: String, behind queued: [Job] = []) throws -> (JobQueue, AsyncJob<Void>) {
        let queue = JobQueue(name: name, maxConcurrentJobs: 1)
        let started = DispatchSemaphore(value: 0)
        let stubborn = untilCancelled("stubborn", started: started)
        try queue.add([stubborn] + queued)
        #expect(started.wait(timeout: .now() + .seconds(60)) == .success)
        return (queue, stubborn)
    }

    static func waiters(of queue: JobQueue) -> Int {
        JobGraph.lock.withLock { queue.core.machine.waiters.count }
    }

    /// Polls until `queue` has `count` registered waiters (a shutdown call has reached its wait).
    static func waitForWaiters(_ count: Int, of queue: JobQueue) async -> Bool {
        await eventuallyHolds { waiters(of: queue) >= count }
    }

    static func isRequestedCancellation(_ outcome: JobOutcome?) -> Bool {
        if case .cancelled(.requested) = outcome { return true }
        return false
    }

    // MARK: Refusing

    @Test func anEmptyQueueShutsDownAtOnceAndRefusesJobsAfter() async throws {
        let queue = JobQueue(name: "closed")
        #expect(!queue.isShutDown)
        await queue.shutDown(gracePeriod: .seconds(5), clock: TestClock())
        #expect(queue.isShutDown)

        let late = BlockJob(name: "late") {}
        #expect(throws: JobError.queueShutDown(job: "late", queue: "closed")) { try queue.add(late) }
        #expect(throws: JobError.queueShutDown(job: "late", queue: "closed")) { try queue.add([late]) }
        #expect(late.state.tag == "ready", "a refused job is left as it was")
        #expect(queue.jobCount == 0)
        // It may still run elsewhere.
        let other = JobQueue(name: "open")
        try other.add(late)
        await late.finished()
        #expect(late.outcome?.isSucceeded == true)
        // An empty batch adds nothing, so it is not refused.
        try queue.add([])
    }

    @Test func theRefusalSaysWhatHappenedAndWhatToDo() {
        let error = JobError.queueShutDown(job: "late", queue: "closed")
        #expect(error.code == .queueShutDown)
        #expect(error.queue == "closed")
        #expect(error.description.contains("late was not added"))
        #expect(error.description.contains("queue closed is shutting down"))
        #expect(error.code.description == "queueShutDown")
    }

    @Test func addJobAfterShutdownReturnsAJobCancelledWithoutRunning() async {
        let queue = JobQueue(name: "closed-closures", maxConcurrentJobs: 1)
        await queue.shutDown(gracePeriod: .seconds(5), clock: TestClock())
        let ran = Counter()
        let job = queue.addJob { ran.increment() }
        #expect(job.isFinished)
        #expect(Self.isRequestedCancellation(job.outcome))
        await queue.allJobsFinished()
        #expect(ran.value == 0)
        #expect(queue.jobCount == 0)
    }

    /// With every slot busy, `addJob` pushes onto the queue's inbox without the lock; a job
    /// pushed once shutdown has begun is still refused, before `addJob` returns.
    @Test func addJobInTheGracePeriodIsRefusedWithEverySlotBusy() async throws {
        let running = Gated("running")
        let queue = try Self.queue("busy", running: running)
        let shutdown = Task { await queue.shutDown(gracePeriod: .seconds(30), clock: TestClock()) }
        #expect(await Self.waitForWaiters(1, of: queue))

        let ran = Counter()
        let late = queue.addJob { ran.increment() }
        #expect(late.isFinished)
        #expect(Self.isRequestedCancellation(late.outcome))
        running.open()
        await shutdown.value(within: 30)
        #expect(ran.value == 0)
        #expect(running.job.outcome?.isSucceeded == true)
    }

    /// Threads adding closures race one shutting the queue down: each job is either taken (and
    /// runs) or refused (cancelled without running); none is lost, none ends twice, and no job
    /// is unfinished when `shutDown` returns.
    @Test(arguments: [1, 4], [false, true])
    func addJobRacingShutdownLosesNothing(maxConcurrentJobs: Int, finishingQueuedJobs: Bool) async {
        await Self.raceAddingWithShutdown(
            maxConcurrentJobs: maxConcurrentJobs, threads: 2, perThread: 2_000,
            finishingQueuedJobs: finishingQueuedJobs)
    }

    /// The same race in many short rounds, so that the shutdown often falls between a job's
    /// push onto a busy queue's inbox and the pusher's next look at the queue. A job the
    /// shutdown took in is taken: with `finishingQueuedJobs` it runs, and it must then finish
    /// as having succeeded, not be cancelled as refused after it ran.
    @Test func aJobPushedJustBeforeTheShutdownIsTakenNotRefused() async {
        for _ in 0..<300 {
            await Self.raceAddingWithShutdown(
                maxConcurrentJobs: 1, threads: 2, perThread: 100, finishingQueuedJobs: true)
        }
    }

    private static func raceAddingWithShutdown(
        maxConcurrentJobs: Int, threads: Int, perThread: Int, finishingQueuedJobs: Bool
    ) async {
        let queue = JobQueue(name: "race", maxConcurrentJobs: maxConcurrentJobs)
        let ran = Counter()
        let jobs = Protected<[Job]>([])
        let start = DispatchSemaphore(value: 0)
        let added = DispatchGroup()
        for _ in 0..<threads {
            added.enter()
            Thread {
                start.wait()
                for _ in 0..<perThread {
                    let job = queue.addJob { ran.increment() }
                    jobs.write { $0.append(job) }
                }
                added.leave()
            }.start()
        }
        for _ in 0..<threads { start.signal() }
        await queue.shutDown(
            gracePeriod: .seconds(5), clock: TestClock(), finishingQueuedJobs: finishingQueuedJobs)
        // Every job whose `addJob` has returned by now was taken before the shutdown (and the
        // call waited for it) or refused (finished at once).
        let unfinishedAtReturn = jobs.value.filter { !$0.isFinished }.map(\.description)
        #expect(unfinishedAtReturn.isEmpty)
        #expect(added.wait(timeout: .now() + .seconds(60)) == .success)
        await queue.allJobsFinished()
        let all = jobs.value
        #expect(all.count == threads * perThread)
        let succeeded = all.count { $0.outcome?.isSucceeded == true }
        let refused = all.count { isRequestedCancellation($0.outcome) }
        #expect(succeeded + refused == all.count, "every job either ran or was refused")
        #expect(succeeded == ran.value, "a refused job never ran, a taken one ran once")
        #expect(queue.jobCount == 0)
    }

    // MARK: Jobs present at shutdown

    @Test func queuedJobsAreCancelledAtOnceAndTheRunningOneFinishes() async throws {
        let queue = JobQueue(name: "serial", maxConcurrentJobs: 1)
        let running = Gated("running")
        let queued = BlockJob(name: "queued") {}
        let dependent = BlockJob(name: "dependent") {}
        try dependent.addDependency(running.job)
        try queue.add([running.job, queued, dependent])
        #expect(running.waitUntilStarted())

        let clock = TestClock()
        let shutdown = Task { await queue.shutDown(gracePeriod: .seconds(30), clock: clock) }
        #expect(await Self.waitForWaiters(1, of: queue))
        #expect(queue.isShutDown)
        #expect(Self.isRequestedCancellation(queued.outcome))
        #expect(Self.isRequestedCancellation(dependent.outcome))
        #expect(!running.job.isFinished, "a running job runs on in the grace period")
        #expect(!running.job.isCancelled)

        running.open()
        await shutdown.value(within: 30)
        #expect(running.job.outcome?.isSucceeded == true)
        #expect(queue.jobCount == 0)
        #expect(Self.waiters(of: queue) == 0)
    }

    @Test func finishingQueuedJobsLetsThemStartInTheGracePeriod() async throws {
        let queue = JobQueue(name: "draining", maxConcurrentJobs: 1)
        let running = Gated("running")
        let ran = Counter()
        let queued = BlockJob(name: "queued") { ran.increment() }
        try queue.add([running.job, queued])
        #expect(running.waitUntilStarted())

        let shutdown = Task {
            await queue.shutDown(gracePeriod: .seconds(30), clock: TestClock(), finishingQueuedJobs: true)
        }
        #expect(await Self.waitForWaiters(1, of: queue))
        #expect(!queued.isFinished, "a queued job waits for its turn")
        #expect(throws: JobError.queueShutDown(job: "late", queue: "draining")) {
            try queue.add(BlockJob(name: "late") {})
        }

        running.open()
        await shutdown.value(within: 30)
        #expect(queued.outcome?.isSucceeded == true)
        #expect(ran.value == 1)
    }

    @Test func theGracePeriodRunningOutCancelsWhatIsLeft() async throws {
        let queued = BlockJob(name: "queued") {}
        let (queue, stubborn) = try Self.queueRunningStubborn("slow", behind: [queued])

        let clock = TestClock()
        let shutdown = Task {
            await queue.shutDown(gracePeriod: .seconds(10), clock: clock, finishingQueuedJobs: true)
        }
        #expect(await Self.waitForWaiters(1, of: queue))
        await clock.advance(by: .seconds(9))
        #expect(!stubborn.isFinished, "not cancelled before the grace period ends")
        await clock.advance(by: .seconds(1))
        await shutdown.value(within: 30)
        #expect(Self.isRequestedCancellation(stubborn.outcome))
        #expect(Self.isRequestedCancellation(queued.outcome))
        #expect(queue.jobCount == 0)
        #expect(Self.waiters(of: queue) == 0, "the grace period's registration is taken back")
    }

    @Test func cancellingTheAwaitingTaskEndsTheGracePeriodAtOnce() async throws {
        let (queue, stubborn) = try Self.queueRunningStubborn("cut-short")

        let shutdown = Task { await queue.shutDown(gracePeriod: .seconds(3600), clock: TestClock()) }
        #expect(await Self.waitForWaiters(1, of: queue))
        shutdown.cancel()
        await shutdown.value(within: 30)
        #expect(Self.isRequestedCancellation(stubborn.outcome))
        #expect(queue.jobCount == 0)
    }

    @Test func aSecondCallAlsoWaitsForEveryJob() async throws {
        let running = Gated("running")
        let queue = try Self.queue("twice", running: running)

        let clock = TestClock()
        let first = Task { await queue.shutDown(gracePeriod: .seconds(30), clock: clock) }
        #expect(await Self.waitForWaiters(1, of: queue))
        let second = Task {
            await queue.shutDown(gracePeriod: .seconds(30), clock: clock)
            return running.job.isFinished
        }
        #expect(await Self.waitForWaiters(2, of: queue))
        running.open()
        await first.value(within: 30)
        #expect(await second.value(within: 30) == true, "the second call returned before the job finished")
        #expect(running.job.outcome?.isSucceeded == true)
    }

    @Test func jobsRunningPastTheirCancellationKeepTheCallWaiting() async throws {
        let running = Gated("running")
        let queue = try Self.queue("ignores-cancellation", running: running)

        let clock = TestClock()
        let returned = Protected(false)
        let shutdown = Task {
            await queue.shutDown(gracePeriod: .seconds(1), clock: clock)
            returned.write { $0 = true }
        }
        #expect(await Self.waitForWaiters(1, of: queue))
        await clock.advance(by: .seconds(1))
        // Cancelled, it runs on: the call waits for it (its own registration is an unlimited wait).
        #expect(await Self.waitForWaiters(1, of: queue))
        #expect(running.job.isCancelled)
        #expect(!returned.value)
        running.open()
        await shutdown.value(within: 30)
        #expect(returned.value)
        #expect(Self.isRequestedCancellation(running.job.outcome))
    }
}
