import BatonInternals
import BatonJobs
import BatonLocks
import BatonTestSupport
import Dispatch
import Foundation
import Testing

#if canImport(CDispatch)
import CDispatch
#endif

@Suite struct SchedulingTests {
    /// Jobs added to a suspended serial queue start by priority, then in the order added.
    @Test(arguments: 0..<5)
    func serialQueueStartsByPriorityThenFIFO(seed: Int) throws {
        let queue = JobQueue(name: "serial", maxConcurrentJobs: 1)
        queue.isSuspended = true
        let started = Log<Int>()
        var random = SplitMix64(seed: UInt64(seed))
        var expected: [(priority: JobPriority, index: Int)] = []
        for index in 0..<200 {
            let priority = JobPriority.allCases.randomElement(using: &random)!
            expected.append((priority, index))
            if index % 2 == 0 {
                queue.addJob(priority: priority) { started.append(index) }
            } else {
                try queue.add(BlockJob(priority: priority) { started.append(index) })
            }
        }
        #expect(queue.jobCount == 200)
        #expect(started.all.isEmpty)  // a suspended queue starts nothing
        queue.isSuspended = false
        #expect(drain(queue))
        let order = expected.sorted { $0.priority != $1.priority ? $0.priority > $1.priority : $0.index < $1.index }
        #expect(started.all == order.map(\.index))
    }

    /// In a serial queue, dependencies still decide, and a high-priority job's unfinished
    /// dependency is raised to its priority.
    @Test func dependenciesOfAHighPriorityJobAreRaised() throws {
        let queue = JobQueue(name: "raise", maxConcurrentJobs: 1)
        queue.isSuspended = true
        let started = Log<String>()
        let low = BlockJob(name: "low", priority: .low) { started.append("low") }
        let normal = BlockJob(name: "normal", priority: .normal) { started.append("normal") }
        let base = BlockJob(name: "base", priority: .veryLow) { started.append("base") }
        let urgent = BlockJob(name: "urgent", priority: .veryHigh) { started.append("urgent") }
        let later = BlockJob(name: "later", priority: .veryLow) { started.append("later") }
        try queue.add([low, normal, base, later])
        try urgent.addDependency(base)  // after base was queued: it moves up
        try queue.add(urgent)
        // A job raised after it was added moves up too.
        later.priority = .high
        queue.isSuspended = false
        #expect(drain(queue))
        #expect(started.all == ["base", "urgent", "later", "normal", "low"])
    }

    /// At most maxConcurrentJobs bodies run at once, and the limit is reached.
    /// The first `limit` jobs fill every slot and stay there; the rest are added only then, so
    /// that each addition meets a full queue. A worker beyond the limit, if the queue started
    /// one, gets a second to show (time for Dispatch to find it a thread while the others block)
    /// before the jobs are released.
    @Test(arguments: [1, 2, 3])
    func concurrencyLimit(limit: Int) throws {
        let queue = JobQueue(name: "limit", maxConcurrentJobs: limit)
        let running = Protected((now: 0, peak: 0))
        let release = DispatchSemaphore(value: 0)
        let addJob = {
            _ = queue.addJob {
                running.write { state in
                    state.now += 1
                    state.peak = max(state.peak, state.now)
                }
                _ = release.wait(timeout: .now() + testDeadline)
                running.write { $0.now -= 1 }
                release.signal()  // pass it on: each job releases the next
            }
        }
        for _ in 0..<limit { addJob() }
        #expect(eventually { running.value.now == limit })
        for _ in 0..<(limit * 3) { addJob() }
        Thread.sleep(forTimeInterval: 1)
        #expect(running.value.now == limit)
        release.signal()
        #expect(drain(queue))
        #expect(running.value.peak == limit)
    }

    /// Suspending stops new starts; a running job finishes; resuming runs the rest.
    @Test func suspendLetsRunningJobsFinish() throws {
        let queue = JobQueue(name: "suspend", maxConcurrentJobs: 1)
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let ran = Counter()
        queue.addJob {
            entered.signal()
            _ = release.wait(timeout: .now() + testDeadline)
            ran.increment()
        }
        #expect(entered.wait(timeout: .now() + testDeadline) == .success)
        queue.isSuspended = true
        let later = (0..<10).map { _ in queue.addJob { ran.increment() } }
        release.signal()
        #expect(eventually { ran.value == 1 && queue.jobCount == 10 })
        #expect(later.allSatisfy { $0.isReady })
        queue.isSuspended = false
        #expect(drain(queue))
        #expect(ran.value == 11)
    }

    /// An async job's task runs at the task priority of its quality of service: the job's
    /// own, or else its queue's.
    @Test func qualityOfServiceReachesTheTask() async throws {
        let queue = JobQueue(name: "qos", maxConcurrentJobs: 2, qualityOfService: .utility)
        #expect(queue.qualityOfService == .utility)
        let inherited = AsyncJob { Task.currentPriority }
        let own = AsyncJob { Task.currentPriority }
        own.qualityOfService = .userInitiated
        try queue.add([inherited, own])
        #expect(try await inherited.value == .utility)
        #expect(try await own.value == .high)
    }

    /// A blocking job's body runs on a thread of `DispatchQueue.global(qos:)` of its quality of
    /// service: the job's own, or else its queue's. The current queue's label names the global
    /// queue whose thread runs the body, on Linux as on Apple platforms.
    ///
    /// Async, and waiting without blocking a thread: on a loaded machine the background class
    /// gets no CPU until the load drops, and a blocked thread of the cooperative pool would stall
    /// every other test meanwhile.
    @Test(.timeLimit(.minutes(3))) func blockingJobsRunOnTheGlobalQueueOfTheirQualityOfService() async throws {
        for queueQoS in JobQualityOfService.allCases {
            let queue = JobQueue(name: "qos \(queueQoS)", maxConcurrentJobs: 2, qualityOfService: queueQoS)
            let seen = Protected<[Int: String]>([:])
            var expected: [Int: String] = [:]
            var jobs: [Job] = []
            let overrides: [JobQualityOfService?] = [nil] + JobQualityOfService.allCases
            // Twice over, so that workers hand jobs of other classes to each other.
            for (index, own) in (overrides + overrides).enumerated() {
                let job = BlockJob { seen.write { $0[index] = currentQueueLabel() } }
                job.qualityOfService = own
                expected[index] = DispatchQueue.global(qos: (own ?? queueQoS).dispatchQoS).label
                jobs.append(job)
            }
            try queue.add(jobs)
            await queue.allJobsFinished()
            #expect(seen.read { $0 } == expected, "queue at \(queueQoS)")
        }
    }

    @Test func addJobAndBatchesRejectMisuse() throws {
        let queue = JobQueue(name: "misuse")
        let other = JobQueue(name: "other")
        other.isSuspended = true
        let job = BlockJob(name: "once") {}
        try other.add(job)
        #expect(throws: JobError.alreadyAdded(job: "once", queue: "other")) { try queue.add(job) }
        let fresh = BlockJob(name: "fresh") {}
        #expect(throws: JobError.alreadyAdded(job: "fresh", queue: "misuse")) { try queue.add([fresh, fresh]) }
        #expect(queue.jobCount == 0)  // all or nothing
        let done = BlockJob(name: "done") {}
        try done.start()
        #expect(throws: JobError.alreadyFinished(job: "done")) { try queue.add(done) }
        // A refused batch leaves its jobs as they were: each can still be added.
        let second = BlockJob(name: "second") {}
        #expect(throws: JobError.alreadyFinished(job: "done")) { try queue.add([fresh, second, done]) }
        #expect(queue.jobCount == 0)
        try queue.add([fresh, second])
        #expect(drain(queue))
        #expect(fresh.state.tag == "succeeded" && second.state.tag == "succeeded")
        other.cancelAll()
        #expect(drain(other))
    }
}

/// The label of the queue the calling thread is running a block of.
private func currentQueueLabel() -> String {
    #if canImport(CDispatch)
    String(cString: dispatch_queue_get_label(nil))
    #else
    String(cString: __dispatch_queue_get_label(nil))
    #endif
}
