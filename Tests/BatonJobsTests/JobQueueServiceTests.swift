#if Lifecycle
import BatonLocks
import BatonTestSupport
import Clocks
import Dispatch
import Foundation
import ServiceLifecycle
import Testing

@testable import BatonJobs

/// `JobQueueService` in a real `ServiceGroup`: graceful shutdown while jobs run, cancellation of
/// the group, and the order in which a group stops a queue and what feeds it.
@Suite(.timeLimit(.minutes(1)), .offTheCooperativePool) struct JobQueueServiceTests {
    typealias Gated = ShutdownTests.Gated

    /// A service that adds jobs to `queue` as fast as it can, until graceful shutdown.
    struct Producer: Service {
        let queue: JobQueue
        let added: Protected<[Job]>
        let refusals: Protected<[JobError]>

        func run() async {
            await cancelWhenGracefulShutdown {
                var next = 0
                while !Task.isCancelled && next < 1_000_000 {
                    let job = BlockJob(name: "job-\(next)") {}
                    next += 1
                    do throws(JobError) {
                        try queue.add(job)
                        added.write { $0.append(job) }
                    } catch {
                        refusals.write { $0.append(error) }
                    }
                    await Task.yield()
                }
            }
        }
    }

    @Test func gracefulShutdownLetsTheRunningJobFinishAndCancelsTheQueuedOnes() async throws {
        let queue = JobQueue(name: "service", maxConcurrentJobs: 1)
        let running = Gated("running")
        let queued = BlockJob(name: "queued") {}
        let endings = Counter()
        running.job.completion = { _ in endings.increment() }
        queued.completion = { _ in endings.increment() }
        try queue.add([running.job, queued])
        #expect(running.waitUntilStarted())

        let group = ServiceGroup(services: [JobQueueService(queue, gracePeriod: .seconds(30), clock: TestClock())])
        let run = Task { try await group.run() }
        await group.triggerGracefulShutdown()
        #expect(await eventuallyHolds { queue.isShutDown })
        #expect(ShutdownTests.isRequestedCancellation(queued.outcome))
        #expect(!running.job.isFinished)

        running.open()
        try await run.value(within: 30)
        #expect(running.job.outcome?.isSucceeded == true)
        #expect(endings.value == 2, "each job ends once")
        #expect(queue.jobCount == 0)
        #expect(throws: JobError.queueShutDown(job: "late", queue: "service")) {
            try queue.add(BlockJob(name: "late") {})
        }
    }

    @Test func finishingQueuedJobsLetsTheQueuedOnesStart() async throws {
        let queue = JobQueue(name: "service-draining", maxConcurrentJobs: 1)
        let running = Gated("running")
        let queued = BlockJob(name: "queued") {}
        try queue.add([running.job, queued])
        #expect(running.waitUntilStarted())

        let service = JobQueueService(queue, gracePeriod: .seconds(30), clock: TestClock(), finishingQueuedJobs: true)
        let group = ServiceGroup(services: [service])
        let run = Task { try await group.run() }
        await group.triggerGracefulShutdown()
        #expect(await ShutdownTests.waitForWaiters(1, of: queue))
        #expect(!queued.isFinished)
        running.open()
        try await run.value(within: 30)
        #expect(queued.outcome?.isSucceeded == true)
    }

    @Test func theGracePeriodRunsOnTheServicesClock() async throws {
        let (queue, stubborn) = try ShutdownTests.queueRunningStubborn("service-clock")

        let clock = TestClock()
        let group = ServiceGroup(services: [JobQueueService(queue, gracePeriod: .seconds(5), clock: clock)])
        let run = Task { try await group.run() }
        await group.triggerGracefulShutdown()
        #expect(await ShutdownTests.waitForWaiters(1, of: queue))
        #expect(!stubborn.isFinished)
        await clock.advance(by: .seconds(5))
        try await run.value(within: 30)
        #expect(ShutdownTests.isRequestedCancellation(stubborn.outcome))
    }

    @Test func cancellingTheGroupCancelsEveryJobAndStillWaitsForThem() async throws {
        let queued = BlockJob(name: "queued") {}
        let (queue, stubborn) = try ShutdownTests.queueRunningStubborn("service-cancelled", behind: [queued])

        let service = Announced(
            JobQueueService(queue, gracePeriod: .seconds(3600), clock: TestClock(), finishingQueuedJobs: true))
        let group = ServiceGroup(services: [service])
        let run = Task { try await group.run() }
        // The service is waiting for graceful shutdown; the group is cancelled instead.
        #expect(service.waitUntilStarted())
        run.cancel()
        _ = try? await run.value(within: 30)
        #expect(queue.isShutDown)
        #expect(ShutdownTests.isRequestedCancellation(stubborn.outcome))
        #expect(ShutdownTests.isRequestedCancellation(queued.outcome))
        #expect(queue.jobCount == 0)
    }

    /// A group shuts its services down in reverse order, the last one first: a producer listed
    /// after the queue, adding jobs up to its shutdown, has stopped when the queue shuts down,
    /// so no job it added is refused or cancelled.
    @Test func aQueueListedBeforeItsProducerShutsDownAfterIt() async throws {
        let queue = JobQueue(name: "fed", maxConcurrentJobs: 2)
        let added = Protected<[Job]>([])
        let refusals = Protected<[JobError]>([])
        let producer = Producer(queue: queue, added: added, refusals: refusals)
        let group = ServiceGroup(services: [
            JobQueueService(queue, gracePeriod: .seconds(30), clock: TestClock(), finishingQueuedJobs: true), producer,
        ])
        let run = Task { try await group.run() }
        #expect(await eventuallyHolds { added.value.count >= 200 })
        await group.triggerGracefulShutdown()
        try await run.value(within: 30)
        #expect(refusals.value.map(\.description) == [])
        #expect(added.value.count >= 200)
        #expect(added.value.allSatisfy { $0.outcome?.isSucceeded == true })
        #expect(queue.isShutDown)
    }

    @Test func theServiceIsNamedByItsQueue() {
        let service = JobQueueService(JobQueue(name: "thumbnails"), gracePeriod: .seconds(1))
        #expect(service.description == "JobQueueService(thumbnails)")
        #expect(service.gracePeriod == .seconds(1))
        #expect(!service.finishingQueuedJobs)
    }
}
#endif
