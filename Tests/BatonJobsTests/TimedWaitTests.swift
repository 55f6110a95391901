import BatonLocks
import BatonTestSupport
import Dispatch
import Foundation
import Testing

@testable import BatonJobs

/// `Job.waitUntilFinished(timeout:)` and `JobQueue.waitUntilAllJobsAreFinished(timeout:)`. A job
/// held on a gate shows a timeout that fires; a gate opened while a waiter sleeps, one that does
/// not. Nothing is inferred from how long anything took, and a waiter that gives up must leave
/// no registration behind (read through the state machines).
@Suite(.timeLimit(.minutes(2))) struct TimedWaitTests {
    /// A job that runs until its gate opens (on a worker of `queue`, or nowhere while the queue
    /// is suspended).
    final class Gated: Sendable {
        let gate = DispatchSemaphore(value: 0)
        let completed = Protected(false)
        let job: BlockJob

        init() {
            let gate = gate
            job = BlockJob { _ = gate.wait(timeout: .now() + .seconds(60)) }
            let completed = completed
            job.completion = { _ in completed.write { $0 = true } }
        }

        func open() { gate.signal() }
    }

    static func waiters(of job: Job) -> Int {
        JobGraph.lock.withLock { job.machine.waiterCount }
    }

    static func waiters(of queue: JobQueue) -> Int {
        JobGraph.lock.withLock { queue.core.machine.waiters.count }
    }

    // MARK: Job

    @Test func aJobStillRunningAtTheTimeoutIsReportedUnfinishedAndLeavesNoWaiter() throws {
        let queue = JobQueue(name: "timed-job")
        let gated = Gated()
        try queue.add(gated.job)
        let results = Protected<[Bool]>([])
        finishes("timed waits") {
            for timeout in [Duration.milliseconds(1), .milliseconds(20)] {
                let result = gated.job.waitUntilFinished(timeout: timeout)
                results.write { $0.append(result) }
            }
        }
        #expect(results.value == [false, false])
        #expect(!gated.job.isFinished)
        #expect(Self.waiters(of: gated.job) == 0)
        gated.open()
        drain(queue)
    }

    @Test func aJobThatFinishesWhileTheWaiterSleepsIsReportedFinished() throws {
        let queue = JobQueue(name: "timed-job-finishes")
        let gated = Gated()
        try queue.add(gated.job)
        let result = Protected<Bool?>(nil)
        let waiter = Thread { result.write { $0 = gated.job.waitUntilFinished(timeout: .seconds(600)) } }
        waiter.start()
        #expect(eventually { Self.waiters(of: gated.job) == 1 })
        gated.open()
        #expect(eventually { result.value != nil })
        #expect(result.value == true)
        // Finished means finalized: the completion handler has run.
        #expect(gated.completed.value)
        #expect(gated.job.isFinished)
    }

    @Test(arguments: [Duration.zero, .nanoseconds(-1), .seconds(-60)])
    func aZeroOrNegativeTimeoutReturnsAtOnceWithoutRegistering(timeout: Duration) throws {
        let queue = JobQueue(name: "timed-job-zero")
        queue.isSuspended = true
        let gated = Gated()
        try queue.add(gated.job)
        let result = Protected<Bool?>(nil)
        finishes("a zero or negative timed wait") {
            result.write { $0 = gated.job.waitUntilFinished(timeout: timeout) }
        }
        #expect(result.value == false)
        #expect(Self.waiters(of: gated.job) == 0)

        queue.isSuspended = false
        gated.open()
        drain(queue)
        finishes("a zero or negative timed wait") {
            result.write { $0 = gated.job.waitUntilFinished(timeout: timeout) }
        }
        #expect(result.value == true)
    }

    @Test func aJobNeverAddedTimesOut() {
        let job = BlockJob {}
        let result = Protected<Bool?>(nil)
        finishes("a timed wait on a job nobody runs") {
            result.write { $0 = job.waitUntilFinished(timeout: .milliseconds(5)) }
        }
        #expect(result.value == false)
        #expect(Self.waiters(of: job) == 0)
    }

    /// Jobs that finish around their waiters' timeouts: `true` always means the completion
    /// handler has run, and no waiter is left on any job, whichever side won each race.
    @Test func finishesRacingTimeoutsLeaveNothingBehind() throws {
        let queue = JobQueue(name: "timed-job-race", maxConcurrentJobs: 4)
        let count = 2_000
        let completed = (0..<count).map { _ in Protected(false) }
        let jobs = (0..<count).map { index in
            let job = BlockJob { if index.isMultiple(of: 3) { usleep(UInt32(index % 50)) } }
            let flag = completed[index]
            job.completion = { _ in flag.write { $0 = true } }
            return job
        }
        try queue.add(jobs)
        let mismatches = Protected(0)
        let timedOut = Protected(0)
        finishes("racing timed waits") {
            for (index, job) in jobs.enumerated() {
                let finished = job.waitUntilFinished(timeout: .microseconds(Int64(index % 40)))
                if finished && !completed[index].value { mismatches.write { $0 += 1 } }
                if !finished { timedOut.write { $0 += 1 } }
            }
        }
        drain(queue)
        #expect(mismatches.value == 0, "a wait returned true before the job's completion handler ran")
        #expect(jobs.allSatisfy { Self.waiters(of: $0) == 0 })
        print("TimedWaitTests: \(timedOut.value) of \(count) racing waits timed out")
    }

    // MARK: Queue

    @Test func aQueueThatDoesNotEmptyInTimeIsReportedSoAndLeavesNoWaiter() throws {
        let queue = JobQueue(name: "timed-queue")
        let gated = Gated()
        try queue.add(gated.job)
        let results = Protected<[Bool]>([])
        finishes("timed queue waits") {
            for timeout in [Duration.milliseconds(1), .milliseconds(20)] {
                let result = queue.waitUntilAllJobsAreFinished(timeout: timeout)
                results.write { $0.append(result) }
            }
        }
        #expect(results.value == [false, false])
        #expect(queue.jobCount == 1)
        #expect(Self.waiters(of: queue) == 0)
        gated.open()
        drain(queue)
    }

    @Test func aQueueThatEmptiesWhileTheWaiterSleepsIsReportedEmptied() throws {
        let queue = JobQueue(name: "timed-queue-empties")
        let gated = Gated()
        try queue.add(gated.job)
        let result = Protected<Bool?>(nil)
        let waiter = Thread { result.write { $0 = queue.waitUntilAllJobsAreFinished(timeout: .seconds(600)) } }
        waiter.start()
        #expect(eventually { Self.waiters(of: queue) == 1 })
        gated.open()
        #expect(eventually { result.value != nil })
        #expect(result.value == true)
        #expect(gated.completed.value)
        #expect(queue.jobCount == 0)
    }

    @Test(arguments: [Duration.zero, .seconds(-60)])
    func aZeroOrNegativeQueueTimeoutReturnsAtOnceWithoutRegistering(timeout: Duration) throws {
        let queue = JobQueue(name: "timed-queue-zero")
        let result = Protected<Bool?>(nil)
        finishes("a zero timed wait on an empty queue") {
            result.write { $0 = queue.waitUntilAllJobsAreFinished(timeout: timeout) }
        }
        #expect(result.value == true)

        queue.isSuspended = true
        let gated = Gated()
        try queue.add(gated.job)
        finishes("a zero timed wait on a suspended queue") {
            result.write { $0 = queue.waitUntilAllJobsAreFinished(timeout: timeout) }
        }
        #expect(result.value == false)
        #expect(Self.waiters(of: queue) == 0)
        queue.isSuspended = false
        gated.open()
        drain(queue)
    }

    @Test func queueEmptyingRacingTimeoutsLeavesNothingBehind() throws {
        let queue = JobQueue(name: "timed-queue-race", maxConcurrentJobs: 2)
        var timedOut = 0
        for round in 0..<300 {
            let completed = Protected(0)
            let jobs = (0..<3).map { _ in
                let job = BlockJob { usleep(UInt32(round % 20)) }
                job.completion = { _ in completed.write { $0 += 1 } }
                return job
            }
            try queue.add(jobs)
            let result = Protected<Bool?>(nil)
            finishes("a racing timed queue wait") {
                result.write { $0 = queue.waitUntilAllJobsAreFinished(timeout: .microseconds(Int64(round % 30) * 10)) }
            }
            if result.value == true {
                #expect(completed.value == 3, "round \(round): true before the queue emptied")
            } else {
                timedOut += 1
            }
            #expect(Self.waiters(of: queue) == 0, "round \(round)")
            drain(queue)
        }
        print("TimedWaitTests: \(timedOut) of 300 racing queue waits timed out")
    }
}
