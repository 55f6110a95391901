import BatonJobs
import BatonLocks
import Foundation
import Testing

@Suite struct MemoryTests {
    /// Finished jobs let go of each other: when the caller drops them, every one is freed.
    @Test func finishedJobsAreReleased() throws {
        let freed = Counter()
        let count = 2_000
        do {
            let queue = JobQueue(name: "release", maxConcurrentJobs: 2)
            var jobs: [CountedJob] = []
            for index in 0..<count {
                let job = CountedJob(freed)
                if index > 0 { try job.addDependency(jobs[index - 1]) }
                if index > 1 { try job.addDependency(jobs[index / 2]) }
                if index % 3 == 0 { job.completion = { _ in } }
                if index % 5 == 0 { job.observe { _ in } }
                jobs.append(job)
            }
            try queue.add(jobs)
            #expect(drain(queue))
            #expect(jobs.allSatisfy { $0.dependencies.isEmpty })
            #expect(freed.value == 0)
        }
        // Workers hand the last job back a moment after the queue empties.
        #expect(eventually { freed.value == count }, "freed \(freed.value) of \(count)")
    }

    /// Cancelled jobs, and the dependents cancelled with them, are released too.
    @Test func cancelledJobsAreReleased() throws {
        let freed = Counter()
        do {
            let queue = JobQueue(name: "release-cancelled")
            queue.isSuspended = true
            var jobs: [CountedJob] = []
            for index in 0..<1_000 {
                let job = CountedJob(freed)
                if index > 0 { try job.addDependency(jobs[index - 1]) }
                jobs.append(job)
            }
            try queue.add(jobs)
            jobs[0].cancel()
            #expect(queue.jobCount == 0)
        }
        #expect(eventually { freed.value == 1_000 }, "freed \(freed.value)")
    }

    /// A chain of 100,000 finished jobs is freed job by job as the caller lets go of them.
    @Test func longFinishedChainIsReleased() throws {
        let freed = Counter()
        let count = 100_000
        do {
            let queue = JobQueue(name: "long-chain", maxConcurrentJobs: 2)
            var chain: [CountedJob] = []
            chain.reserveCapacity(count)
            for index in 0..<count {
                let job = CountedJob(freed)
                if index > 0 { try job.addDependency(chain[index - 1]) }
                chain.append(job)
            }
            try queue.add(chain)
            #expect(drain(queue))
            #expect(chain.allSatisfy { $0.outcome?.isSucceeded == true })
            // Hold only the last job, then let it go: if finished jobs kept their edges, that
            // release would free the whole chain recursively, and with cyclic edges nothing.
            var last: Job? = chain.last
            chain.removeAll()
            #expect(freed.value >= count - 2)  // at most a worker's last job is still held
            last = nil
            _ = last
        }
        #expect(eventually { freed.value == count }, "freed \(freed.value) of \(count)")
    }

    /// A chain whose bodies capture their predecessor: once it ran, holding only the last job
    /// keeps nothing else alive (the bodies are gone), so releasing it cannot free 100,000
    /// jobs recursively. Run on a thread with a 256 KiB stack for good measure.
    @Test func longChainOfCapturingBodiesKeepsNothingAlive() {
        let firstFreed = Protected(false)
        finishes("build, run and release a 100,000-job chain", stackSize: 256 << 10) {
            let queue = JobQueue(name: "capturing-chain", maxConcurrentJobs: 2)
            var chain: [Job] = []
            chain.reserveCapacity(100_000)
            for _ in 0..<100_000 {
                let previous = chain.last
                let job = BlockJob { withExtendedLifetime(previous) {} }
                if let previous { try? job.addDependency(previous) }
                chain.append(job)
            }
            try? queue.add(chain)
            queue.waitUntilAllJobsAreFinished()
            weak let first = chain[0]
            var last: Job? = chain.last
            chain.removeAll()
            firstFreed.write { $0 = eventually { first == nil } }
            last = nil
            _ = last
        }
        #expect(firstFreed.value)
    }
}

/// Counts its deinit.
final class CountedJob: Job, @unchecked Sendable {  // its one field is set at init and never changes
    let freed: Counter
    init(_ freed: Counter) {
        self.freed = freed
        super.init()
    }
    deinit { freed.increment() }
}
