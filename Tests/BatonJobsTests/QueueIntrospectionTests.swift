import BatonJobs
import BatonLocks
import Dispatch
import Foundation
import Testing

/// `JobQueue.current` and `JobQueue.jobs`: which queue runs the calling job, and a queue's
/// unfinished jobs in the order it took them (`OperationQueue.current` and `.operations`).
@Suite(.timeLimit(.minutes(1))) struct QueueIntrospectionTests {
    /// What a job saw as `JobQueue.current`: the queue's name and whether it was the very queue.
    final class Sightings: Sendable {
        private let seen = Protected<[String: [Bool]]>([:])
        func record(_ label: String, _ expected: JobQueue) {
            let current = JobQueue.current
            seen.write { $0[label, default: []].append(current === expected) }
        }
        func recordNil(_ label: String) {
            let current = JobQueue.current
            seen.write { $0[label, default: []].append(current == nil) }
        }
        var all: [String: [Bool]] { seen.value }
    }

    @Test func currentIsTheQueueThatRunsTheCallingJobInEveryKindOfBody() async throws {
        let first = JobQueue(name: "first", maxConcurrentJobs: 2)
        let second = JobQueue(name: "second", maxConcurrentJobs: 1)
        let seen = Sightings()
        #expect(JobQueue.current == nil)

        for index in 0..<20 {
            let queue = index.isMultiple(of: 2) ? first : second
            queue.addJob { seen.record("closure", queue) }
        }
        final class Subclass: Job, @unchecked Sendable {
            let seen: Sightings
            let queue: JobQueue
            init(_ seen: Sightings, _ queue: JobQueue) {
                self.seen = seen
                self.queue = queue
                super.init()
            }
            override func main() throws { seen.record("subclass", queue) }
        }
        try second.add(Subclass(seen, second))
        try first.add(ResultJob { seen.record("result", first) })

        // Several blocks run on several threads at once: the blocks wait until two are in, so
        // that at least one runs away from the worker's thread (when the machine has two cores).
        let inside = Counter()
        let blocks = BlockJob { seen.record("block", second) }
        for _ in 0..<4 {
            try blocks.addBlock {
                inside.increment()
                _ = eventually(within: 5) { inside.value >= 2 }
                seen.record("block", second)
            }
        }
        try second.add(blocks)

        // An async body sees it across suspensions and in the child tasks it awaits, not in a
        // task it starts on its own.
        let asyncJob = AsyncJob {
            seen.record("async", first)
            await Task.yield()
            try await Task.sleep(for: .milliseconds(1))
            seen.record("async", first)
            async let child: Void = seen.record("async child", first)
            await child
            await Task { seen.record("task from an async body", first) }.value
            await Task.detached { seen.recordNil("detached task") }.value
        }
        try first.add(asyncJob)
        // A task started by a synchronous body runs on its own.
        let started = Protected<Task<Void, Never>?>(nil)
        first.addJob { started.write { $0 = Task { seen.recordNil("task from a body") } } }

        #expect(drain(first))
        #expect(drain(second))
        await started.value?.value

        let all = seen.all
        #expect(all["closure"] == Array(repeating: true, count: 20))
        #expect(all["subclass"] == [true])
        #expect(all["result"] == [true])
        #expect(all["block"] == Array(repeating: true, count: 5))
        #expect(all["async"] == [true, true])
        #expect(all["async child"] == [true])
        #expect(all["task from an async body"] == [true])
        #expect(all["detached task"] == [true])
        #expect(all["task from a body"] == [true])
        #expect(JobQueue.current == nil)
    }

    @Test func aWorkerThreadForgetsItsQueueOnceItsJobsAreDone() {
        // Dispatch reuses the workers' threads; after the queue's jobs, code on them is in no
        // queue. Many rounds, so that the pool's threads each served the queue before.
        let queue = JobQueue(name: "forgotten", maxConcurrentJobs: 2)
        let strays = Counter()
        for _ in 0..<50 {
            for _ in 0..<8 { queue.addJob {} }
            #expect(drain(queue))
            DispatchQueue.concurrentPerform(iterations: 8) { _ in
                if JobQueue.current != nil { strays.increment() }
            }
            let done = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                if JobQueue.current != nil { strays.increment() }
                done.signal()
            }
            #expect(done.wait(timeout: .now() + testDeadline) == .success)
        }
        #expect(strays.value == 0)
    }

    @Test func currentOutlivesTheLastHandleAndStaysOneQueue() throws {
        let release = DispatchSemaphore(value: 0)
        let found = Protected<[JobQueue?]>([])
        weak var original: JobQueue?
        do {
            let queue = JobQueue(name: "orphan", maxConcurrentJobs: 3)
            original = queue
            for _ in 0..<2 {
                queue.addJob {
                    _ = release.wait(timeout: .now() + testDeadline)
                    let current = JobQueue.current
                    found.write { $0.append(current) }
                }
            }
            // While someone holds the queue, `current` is that very queue.
            let held = Protected<Bool?>(nil)
            let identity = ObjectIdentifier(queue)
            queue.addJob { held.write { $0 = JobQueue.current.map(ObjectIdentifier.init) == identity } }
            #expect(eventually { held.value != nil })
            #expect(held.value == true)
        }
        // Nobody holds the queue now; its two jobs still run.
        #expect(eventually { original == nil })
        release.signal()
        release.signal()
        #expect(eventually { found.value.count == 2 })
        let queues = found.value.compactMap { $0 }
        #expect(queues.count == 2)
        #expect(queues.first?.name == "orphan")
        #expect(queues.first?.maxConcurrentJobs == 3)
        #expect(queues.first === queues.last)
    }

    @Test func jobsListsTheUnfinishedJobsInTheOrderAdded() throws {
        let queue = JobQueue(name: "listed", maxConcurrentJobs: 1)
        let gate = DispatchSemaphore(value: 0)
        let running = DispatchSemaphore(value: 0)
        let blocker = queue.addJob {
            running.signal()
            _ = gate.wait(timeout: .now() + testDeadline)
        }
        #expect(running.wait(timeout: .now() + testDeadline) == .success)
        // Priorities and dependencies decide the order jobs run in, not the order listed.
        let last = ResultJob(priority: .veryHigh) { 1 }
        let first = ResultJob(priority: .veryLow) { 2 }
        try last.addDependency(first)
        try queue.add([last, first])
        let cancelled = queue.addJob {}
        cancelled.cancel()
        // The only slot is busy: these go through the inbox, and are listed all the same.
        let quick = (0..<3).map { index in queue.addJob(priority: index == 2 ? .high : .low) {} }

        let expected = [blocker, last, first] + quick
        let listed = queue.jobs
        #expect(listed.count == expected.count)
        #expect(zip(listed, expected).allSatisfy { $0 === $1 })
        #expect(queue.jobCount == expected.count)

        gate.signal()
        #expect(drain(queue))
        #expect(queue.jobs.isEmpty)
    }

    @Test func aJobIsListedUntilItsCompletionHandlerHasRun() {
        let queue = JobQueue(name: "completing", maxConcurrentJobs: 1)
        let entered = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        let job = BlockJob {}
        job.completion = { _ in
            entered.signal()
            _ = gate.wait(timeout: .now() + testDeadline)
        }
        queue.addJob {}  // listed before it, gone once it has finished
        try? queue.add(job)
        #expect(entered.wait(timeout: .now() + testDeadline) == .success)
        // The body has run; the completion handler is running: the job is still the queue's.
        #expect(eventually { queue.jobCount == 1 })
        #expect(queue.jobs.count == 1 && queue.jobs.first === job)
        gate.signal()
        #expect(drain(queue))
        #expect(queue.jobs.isEmpty)
    }
}
