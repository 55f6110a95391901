import BatonLocks
import BatonTestSupport
import Foundation
import Testing

@testable import BatonJobs

/// Every job, body, completion handler, observer, output and error is released once the work
/// ends, and so is the queue: 100,000 jobs of each kind, checked with weak references to the
/// jobs and queues and a deinit counter on what the jobs hold, with exact counts.
///
/// Workers hand the last job back a moment after the queue empties, so each test polls for the
/// release with a bounded wait on a thread of its own, then checks the exact counts.
@Suite(.offTheCooperativePool) struct LeakTests {
    /// 100,000 of each kind; a tenth under a sanitizer.
    static let count = reducedUnderSanitizer(100_000, by: 10)

    /// A job's dependency in these graphs: a binary tree, so that failures and cancellations
    /// reach whole subtrees and the queue always has several jobs ready.
    static func parent(of index: Int) -> Int? { index == 0 ? nil : (index - 1) / 2 }

    /// Block, result, async and closure jobs on two queues, with edges across them; some hold
    /// themselves in their completion handler or an observer, a cycle that must end when the
    /// job finishes.
    @Test(.timeLimit(.minutes(1))) func graphsOfEveryKindAreReleased() async throws {
        let census = Census()
        let refs = WeakRefs()
        let ran = Protected(0)
        do {
            let queues = [JobQueue(name: "leaks-a", maxConcurrentJobs: 2), JobQueue(name: "leaks-b")]
            var jobs: [Job] = []
            jobs.reserveCapacity(Self.count)
            for index in 0..<Self.count {
                let tracked = Tracked(census)
                let job: Job
                switch index % 4 {
                case 0:
                    job = BlockJob { withExtendedLifetime(tracked) { ran.write { $0 += 1 } } }
                case 1:
                    job = ResultJob<Tracked, Never> {
                        ran.write { $0 += 1 }
                        return tracked  // the output: released with the job
                    }
                case 2 where index % 40 == 2:
                    job = AsyncJob<Tracked> {
                        ran.write { $0 += 1 }
                        return tracked
                    }
                case 3:
                    let block = BlockJob { withExtendedLifetime(tracked) { ran.write { $0 += 1 } } }
                    try block.addBlock { withExtendedLifetime(tracked) {} }
                    job = block
                default:
                    job = BlockJob { withExtendedLifetime(tracked) { ran.write { $0 += 1 } } }
                }
                if let parent = Self.parent(of: index) { try job.addDependency(jobs[parent]) }
                if index % 10 == 0 { job.completion = { _ in withExtendedLifetime((job, tracked)) {} } }
                if index % 10 == 5 { job.observe { _ in withExtendedLifetime((job, tracked)) {} } }
                jobs.append(job)
                refs.add(job)
            }
            try queues[0].add(jobs.enumerated().filter { $0.offset % 2 == 0 }.map(\.element))
            try queues[1].add(jobs.enumerated().filter { $0.offset % 2 == 1 }.map(\.element))
            for queue in queues {
                await queue.allJobsFinished()
                refs.add(queue)
                refs.add(queue.core)
            }
            #expect(jobs.allSatisfy { $0.outcome?.isSucceeded == true })
            #expect(jobs.allSatisfy { $0.dependencies.isEmpty })
        }
        #expect(ran.value == Self.count)
        #expect(census.made == Self.count)
        await expectAllReleased(refs, census)
    }

    /// Jobs added with `addJob` while every slot is busy wait in the queue's inbox; the busy
    /// job, the queue's only member, finishes while they are there. Every job, body and the
    /// queue itself are released once they have run.
    @Test(.timeLimit(.minutes(1))) func jobsFromTheInboxAreReleased() async throws {
        let census = Census()
        let refs = WeakRefs()
        let ran = Protected(0)
        do {
            let queue = JobQueue(name: "leaks-inbox", maxConcurrentJobs: 1)
            let gate = DispatchSemaphore(value: 0)
            let started = DispatchSemaphore(value: 0)
            refs.add(
                queue.addJob {
                    started.signal()
                    gate.wait()
                })
            started.wait()
            for _ in 0..<Self.count / 10 {
                let tracked = Tracked(census)
                refs.add(queue.addJob { withExtendedLifetime(tracked) { ran.write { $0 += 1 } } })
            }
            gate.signal()
            // Nothing else moves the inbox in before the busy job, finishing, leaves the queue.
            #expect(await eventuallyHolds { ran.value > 0 })
            await queue.allJobsFinished()
            refs.add(queue)
            refs.add(queue.core)
        }
        #expect(ran.value == Self.count / 10)
        await expectAllReleased(refs, census)
    }

    /// Jobs that only their queue holds: the caller lets go of every job before any of them
    /// runs. Waiting jobs are held by what they wait for, ready ones by the ready FIFOs (also
    /// when a raised priority or a new dependency leaves a stale entry behind), jobs added while
    /// every slot is busy by the inbox, cancelled ones until they are finalized. Each job that is
    /// not cancelled runs exactly once, and every job, body and the queue are released.
    @Test(.timeLimit(.minutes(1))) func jobsOnlyTheirQueueHoldsRunAndAreReleased() async throws {
        let census = Census()
        let refs = WeakRefs()
        let ran = Protected(0)
        let tree = Self.count / 10
        let cancelledRoot = 1
        var expected = 0
        do {
            let queue = JobQueue(name: "leaks-queue-only", maxConcurrentJobs: 2)
            let gate = DispatchSemaphore(value: 0)
            let started = DispatchSemaphore(value: 0)
            for _ in 0..<2 {
                queue.addJob {
                    started.signal()
                    gate.wait()
                }
            }
            started.wait()
            started.wait()
            func counted(_ priority: JobPriority = .normal) -> BlockJob {
                let tracked = Tracked(census)
                let job = BlockJob(priority: priority) { withExtendedLifetime(tracked) { ran.write { $0 += 1 } } }
                refs.add(job)
                return job
            }
            // A tree: every job but the root waits; cancelling node 1 cancels its subtree.
            var jobs: [Job] = []
            var inCancelledSubtree = [Bool](repeating: false, count: tree)
            for index in 0..<tree {
                let job = counted()
                if let parent = Self.parent(of: index) {
                    try job.addDependency(jobs[parent])
                    inCancelledSubtree[index] = inCancelledSubtree[parent]
                }
                if index == cancelledRoot { inCancelledSubtree[index] = true }
                jobs.append(job)
            }
            try queue.add(jobs)
            expected += inCancelledSubtree.count { !$0 }
            // Ready jobs: some raised to a higher level, some given a dependency on the tree's
            // root, some cancelled.
            var ready: [Job] = []
            for _ in 0..<tree {
                let job = counted(.low)
                try queue.add(job)
                ready.append(job)
            }
            for index in ready.indices {
                switch index % 4 {
                case 0: ready[index].priority = .high
                case 1: try ready[index].addDependency(jobs[0])
                case 2: ready[index].cancel()
                default: break
                }
            }
            expected += ready.indices.count { $0 % 4 != 2 }
            // Into the inbox: both slots are busy.
            for _ in 0..<tree {
                let tracked = Tracked(census)
                refs.add(queue.addJob { withExtendedLifetime(tracked) { ran.write { $0 += 1 } } })
            }
            expected += tree
            jobs[cancelledRoot].cancel()
            jobs = []
            ready = []
            gate.signal()
            gate.signal()
            await queue.allJobsFinished()
            refs.add(queue)
            refs.add(queue.core)
        }
        #expect(ran.value == expected)
        #expect(census.made == 3 * tree)
        await expectAllReleased(refs, census)
    }

    /// Jobs of a suspended queue, cancelled in three ways: one subtree by cancelling its root
    /// (its dependents are cancelled with it), single jobs, then everything left with
    /// `cancelAll()`. No body runs; every body, handler and job is released.
    @Test(.timeLimit(.minutes(1))) func cancelledJobsAreReleased() async throws {
        let census = Census()
        let refs = WeakRefs()
        let ran = Protected(0)
        do {
            let queue = JobQueue(name: "leaks-cancelled")
            queue.isSuspended = true
            var jobs: [Job] = []
            jobs.reserveCapacity(Self.count)
            for index in 0..<Self.count {
                let tracked = Tracked(census)
                let job = BlockJob { withExtendedLifetime(tracked) { ran.write { $0 += 1 } } }
                if let parent = Self.parent(of: index) { try job.addDependency(jobs[parent]) }
                if index % 10 == 0 { job.completion = { _ in withExtendedLifetime(job) {} } }
                if index % 10 == 5 { job.observe { _ in withExtendedLifetime(job) {} } }
                jobs.append(job)
                refs.add(job)
            }
            try queue.add(jobs)
            jobs[1].cancel()
            for index in stride(from: 2, to: Self.count, by: 1_000) { jobs[index].cancel() }
            queue.cancelAll()
            queue.isSuspended = false
            await queue.allJobsFinished()
            refs.add(queue)
            refs.add(queue.core)
            #expect(jobs.allSatisfy { if case .cancelled = $0.outcome { true } else { false } })
        }
        #expect(ran.value == 0)
        #expect(census.made == Self.count)
        await expectAllReleased(refs, census)
    }

    /// One job in ten fails with an error that holds a counted value. With `.run` its
    /// dependents run anyway; with `.cancel` its whole subtree is cancelled. The outcomes are
    /// exact, and every job, error and value is released.
    @Test(.timeLimit(.minutes(1)), arguments: [DependencyFailurePolicy.run, .cancel])
    func failingJobsAreReleased(policy: DependencyFailurePolicy) async throws {
        let census = Census()
        let refs = WeakRefs()
        var expected = (succeeded: 0, failed: 0, cancelled: 0)
        var outcomes = (succeeded: 0, failed: 0, cancelled: 0)
        do {
            let queue = JobQueue(name: "leaks-failing-\(policy)")
            var jobs: [Job] = []
            var blocked: [Bool] = []  // whether the job is expected not to succeed
            jobs.reserveCapacity(Self.count)
            for index in 0..<Self.count {
                let fails = index % 10 == 3
                let job = BlockJob {
                    if fails { throw TrackedError(Tracked(census)) }
                }
                job.dependencyFailurePolicy = policy
                if index % 10 == 0 { job.completion = { _ in withExtendedLifetime(job) {} } }
                let parent = Self.parent(of: index)
                if let parent { try job.addDependency(jobs[parent]) }
                let cancelled = policy == .cancel && parent.map { blocked[$0] } == true
                switch (cancelled, fails) {
                case (true, _): expected.cancelled += 1
                case (false, true): expected.failed += 1
                case (false, false): expected.succeeded += 1
                }
                blocked.append(cancelled || fails)
                jobs.append(job)
                refs.add(job)
            }
            try queue.add(jobs)
            await queue.allJobsFinished()
            refs.add(queue)
            refs.add(queue.core)
            for job in jobs {
                switch job.outcome {
                case .succeeded?: outcomes.succeeded += 1
                case .failed?: outcomes.failed += 1
                case .cancelled?: outcomes.cancelled += 1
                case nil: break
                }
            }
        }
        #expect(outcomes == expected)
        #expect(census.made == expected.failed)
        await expectAllReleased(refs, census)
    }

    /// Jobs joined by edges that are never added to a queue nor started are released when
    /// their owner lets go of them: a dependency holds its dependents weakly.
    @Test func jobsThatNeverRunAreReleased() throws {
        let census = Census()
        let refs = WeakRefs()
        do {
            var jobs: [Job] = []
            jobs.reserveCapacity(Self.count)
            for index in 0..<Self.count {
                let tracked = Tracked(census)
                let job = BlockJob { withExtendedLifetime(tracked) {} }
                if let parent = Self.parent(of: index) { try job.addDependency(jobs[parent]) }
                jobs.append(job)
                refs.add(job)
            }
        }
        #expect(refs.alive == 0)
        #expect(census.released == Self.count)
    }

    /// A queue is released once `allJobsFinished()` returns and the caller lets go of it; one
    /// that the caller drops while its jobs still run finishes them, then is released too.
    @Test(.timeLimit(.minutes(1))) func queuesAreReleased() async {
        let census = Census()
        let refs = WeakRefs()
        let ran = Protected(0)
        do {
            let waited = JobQueue(name: "leaks-waited", maxConcurrentJobs: 2)
            let dropped = JobQueue(name: "leaks-dropped", maxConcurrentJobs: 2)
            for queue in [waited, dropped] {
                refs.add(queue)
                refs.add(queue.core)
                for _ in 0..<Self.count / 2 {
                    let tracked = Tracked(census)
                    queue.addJob { withExtendedLifetime(tracked) { ran.write { $0 += 1 } } }
                }
            }
            await waited.allJobsFinished()
        }
        #expect(await eventuallyHolds { ran.value == Self.count })
        #expect(census.made == Self.count)
        await expectAllReleased(refs, census)
    }
}
