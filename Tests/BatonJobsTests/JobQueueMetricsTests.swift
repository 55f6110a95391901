#if Metrics
import BatonLocks
import BatonTestSupport
import CoreMetrics
import Dispatch
import MetricsTestKit
import Testing

@testable import BatonJobs

private struct Failure: Error {}

/// A job queue watched by `MetricsReporter`: jobs added, running, waiting, finished by outcome,
/// and the time they spent waiting and running, read back through swift-metrics' test backend.
@Suite(.timeLimit(.minutes(1))) struct JobQueueMetricsTests {
    private static let queue = ("queue", "thumbnails")

    @Test func jobsAreCountedByStateAndOutcome() throws {
        let metrics = TestMetrics()
        let reporter = MetricsReporter(factory: metrics)
        let busy = AddJobTests.BusyQueue(name: "thumbnails")  // one slot, held by a running job
        reporter.watch(busy.queue, name: "thumbnails")
        func counter(_ label: String, _ more: [(String, String)] = []) throws -> Int64 {
            try metrics.expectCounter(label, [Self.queue] + more).totalValue
        }
        func gauge(_ label: String) throws -> Double? { try metrics.expectGauge(label, [Self.queue]).lastValue }

        let waiting = busy.queue.addJob {}
        let failing = busy.queue.addJob { throw Failure() }
        let cancelled = busy.queue.addJob {}
        let dependency = BlockJob(name: "dependency") {}
        let dependent = BlockJob(name: "dependent") {}
        try dependent.addDependency(dependency)
        try busy.queue.add(dependent)
        reporter.report()
        #expect(try counter("baton_queue_jobs_added_total") == 5)
        #expect(try gauge("baton_queue_jobs_running") == 1)
        #expect(try gauge("baton_queue_jobs_waiting") == 4)
        #expect(try counter("baton_queue_jobs_finished_total", [("outcome", "succeeded")]) == 0)

        cancelled.cancel()
        busy.release()
        try busy.queue.add(dependency)
        #expect(drain(busy.queue))
        #expect([waiting, failing, dependency, dependent].allSatisfy { $0.isFinished })
        reporter.report()
        #expect(try counter("baton_queue_jobs_added_total") == 6)
        #expect(try counter("baton_queue_jobs_finished_total", [("outcome", "succeeded")]) == 4)
        #expect(try counter("baton_queue_jobs_finished_total", [("outcome", "failed")]) == 1)
        #expect(try counter("baton_queue_jobs_finished_total", [("outcome", "cancelled")]) == 1)
        #expect(try gauge("baton_queue_jobs_running") == 0)
        #expect(try gauge("baton_queue_jobs_waiting") == 0)
    }

    @Test func theTimesJobsWaitedAndRanAreKeptOnlyWhileWatched() throws {
        // Not watched: no clock is read, and no time is kept.
        let unwatched = AddJobTests.BusyQueue(name: "unwatched")
        unwatched.queue.addJob {}
        unwatched.release()
        #expect(drain(unwatched.queue))
        #expect(unwatched.queue.counts.waitingTime == .zero && unwatched.queue.counts.runningTime == .zero)

        let metrics = TestMetrics()
        let reporter = MetricsReporter(factory: metrics)
        let busy = AddJobTests.BusyQueue(name: "thumbnails")
        let behind = busy.queue.addJob {}
        reporter.watch(busy.queue, name: "thumbnails")
        reporter.report()
        let waited = try metrics.expectCounter("baton_queue_waiting_seconds_total", [Self.queue])
        let ran = try metrics.expectCounter("baton_queue_running_seconds_total", [Self.queue])
        // Both start at zero when the watch does, whatever happened before.
        #expect(waited.totalValue == 0 && ran.totalValue == 0)
        busy.release()
        #expect(drain(busy.queue))
        #expect(behind.isFinished)
        // The job behind the busy one waited while it ran, and both ran, while watched. (How the
        // two times compare depends on the threads' timing, so it is not checked.)
        let counts = busy.queue.counts
        #expect(counts.waitingTime > .zero && counts.runningTime > .zero)
        reporter.report()
        // The test backend keeps whole seconds of the times exported.
        #expect(waited.totalValue == counts.waitingTime.components.seconds)
        #expect(ran.totalValue == counts.runningTime.components.seconds)
    }

    @Test func jobsRacedWithReportsAreCountedExactlyOnce() throws {
        let metrics = TestMetrics()
        let reporter = MetricsReporter(factory: metrics)
        let queue = JobQueue(name: "racing", maxConcurrentJobs: 2)
        reporter.watch(queue, name: "racing")
        let adders = Protected(0)
        #expect(
            raceThreads(4) { index in
                if index == 0 {
                    while adders.value < 3 { reporter.report() }
                } else {
                    for round in 0..<2_000 {
                        queue.addJob { if round % 10 == 0 { throw Failure() } }
                    }
                    adders.write { $0 += 1 }
                }
            })
        #expect(drain(queue))
        reporter.report()
        func finished(_ outcome: String) throws -> Int64 {
            try metrics.expectCounter("baton_queue_jobs_finished_total", [("queue", "racing"), ("outcome", outcome)])
                .totalValue
        }
        #expect(try metrics.expectCounter("baton_queue_jobs_added_total", [("queue", "racing")]).totalValue == 6_000)
        #expect(try finished("succeeded") == 5_400 && finished("failed") == 600 && finished("cancelled") == 0)
    }
}
#endif
