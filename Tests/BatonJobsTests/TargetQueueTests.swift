import BatonJobs
import BatonLocks
import Dispatch
import Foundation
import Testing

/// Queues whose jobs run on a Dispatch queue of the caller's choosing (`underlyingQueue`), and
/// `JobQueue.main` (`OperationQueue.main`).
@Suite(.timeLimit(.minutes(1))) struct TargetQueueTests {
    /// Marks a Dispatch queue, so that a job can tell whether it runs on it.
    static let mark = DispatchSpecificKey<String>()

    /// Counts the jobs running at once, and the most at any moment.
    final class Overlap: Sendable {
        private let state = Protected((now: 0, most: 0))
        func enter() {
            state.write { state in
                state.now += 1
                state.most = max(state.most, state.now)
            }
        }
        func leave() { state.write { $0.now -= 1 } }
        var most: Int { state.value.most }
    }

    @Test func everyJobRunsOnTheTargetAndASerialTargetRunsOneAtATime() throws {
        let target = DispatchQueue(label: "serial-target")
        target.setSpecific(key: Self.mark, value: "serial-target")
        let queue = JobQueue(name: "on-serial", maxConcurrentJobs: 4, target: target)
        #expect(queue.target === target)
        let onTarget = Counter()
        let overlap = Overlap()
        var jobs: [Job] = []
        for _ in 0..<40 {
            jobs.append(
                BlockJob {
                    overlap.enter()
                    if DispatchQueue.getSpecific(key: Self.mark) == "serial-target" { onTarget.increment() }
                    usleep(200)
                    overlap.leave()
                })
        }
        // Dependencies still decide the order: each job after the one before it, added last-first.
        let order = Log<Int>()
        var chain: [Job] = []
        for index in 0..<10 { chain.append(BlockJob { order.append(index) }) }
        for index in 1..<10 { try chain[index].addDependency(chain[index - 1]) }
        try queue.add(jobs + chain.reversed())
        #expect(drain(queue))
        #expect(onTarget.value == 40)
        #expect(overlap.most == 1)
        #expect(order.all == Array(0..<10))
    }

    @Test func aConcurrentTargetRunsUpToTheLimit() throws {
        let target = DispatchQueue(label: "concurrent-target", attributes: .concurrent)
        target.setSpecific(key: Self.mark, value: "concurrent-target")
        let queue = JobQueue(name: "on-concurrent", maxConcurrentJobs: 2, target: target)
        let onTarget = Counter()
        let overlap = Overlap()
        for _ in 0..<40 {
            queue.addJob {
                overlap.enter()
                if DispatchQueue.getSpecific(key: Self.mark) == "concurrent-target" { onTarget.increment() }
                usleep(200)
                overlap.leave()
            }
        }
        #expect(drain(queue))
        #expect(onTarget.value == 40)
        #expect((1...2).contains(overlap.most))
    }

    @Test func theTargetsOtherWorkRunsBetweenTwoJobs() {
        // A job puts work on the (serial) target while it runs; the next job, ready all along,
        // starts only after that work: each job is a work item of its own.
        let target = DispatchQueue(label: "shared-target")
        let queue = JobQueue(name: "interleaved", maxConcurrentJobs: 1, target: target)
        let events = Log<String>()
        for index in 0..<20 {
            queue.addJob {
                events.append("job \(index)")
                target.async { events.append("between \(index)") }
            }
        }
        #expect(drain(queue))
        let done = DispatchSemaphore(value: 0)
        target.async { done.signal() }
        #expect(done.wait(timeout: .now() + testDeadline) == .success)
        let expected = (0..<20).flatMap { ["job \($0)", "between \($0)"] }
        #expect(events.all == expected)
    }

    /// Whether the caller runs on the main queue, once the test has marked it.
    @Sendable static func onMain() -> Bool { DispatchQueue.getSpecific(key: mark) == "main" }

    @Test @MainActor func theMainQueueRunsJobsOnTheMainActor() async throws {
        #expect(JobQueue.main.target?.label == DispatchQueue.main.label)
        #expect(JobQueue.main.maxConcurrentJobs == 1)
        // On Linux the main queue is served by whichever thread runs it once the main thread has
        // handed it over (`dispatchMain`): being on it is what counts, not `Thread.isMainThread`.
        DispatchQueue.main.setSpecific(key: Self.mark, value: "main")
        let seen = Protected<[String]>([])
        let ended = AsyncSemaphore(value: 0)
        let background = JobQueue(name: "background")
        let render = ResultJob { "rendered" }
        let show = JobQueue.main.addMainActorJob {
            MainActor.preconditionIsolated()
            let value = try render.result.get()
            seen.write { $0.append("\(value) on main: \(Self.onMain())") }
            seen.write { $0.append("current is main: \(JobQueue.current === JobQueue.main)") }
            _ = ended.signal()
        }
        try show.addDependency(render)
        try background.add(render)
        let plain = JobQueue.main.addJob {
            seen.write { $0.append("plain on main: \(Self.onMain())") }
            _ = ended.signal()
        }
        // The main actor is free while this waits: the jobs run on it meanwhile.
        try await ended.wait(timeout: .seconds(30))
        try await ended.wait(timeout: .seconds(30))
        await show.finished()  // its body has returned: it finishes at once
        await plain.finished()
        #expect(show.state.tag == "succeeded")
        #expect(Set(seen.value) == ["rendered on main: true", "current is main: true", "plain on main: true"])
    }

    @Test func aMainActorJobIsTakenByEveryQueueOnTheMainQueue() async {
        // In a process of its own: a queue on the main queue that is not told to be one refuses
        // the job by stopping the process, which here fails this test by name.
        await #expect(processExitsWith: .success) {
            JobQueue.main.addMainActorJob {}
            JobQueue(name: "also-main", maxConcurrentJobs: 2, target: .main).addMainActorJob {}
        }
    }

    @Test func aMainActorJobOnAQueueOffTheMainQueueIsRefusedAtOnceNamingTheQueue() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = JobQueue(name: "not-main", maxConcurrentJobs: 1)
            let gate = DispatchSemaphore(value: 0)
            queue.addJob { _ = gate.wait(timeout: .now() + 30) }  // nothing of the queue runs meanwhile
            queue.addMainActorJob {}
            print("addMainActorJob returned")  // never: the call itself stops the process
        }
        #if DEBUG
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("not-main"), "stderr: \(message)")
        #expect(message.contains("main queue"))
        #else
        _ = result
        #endif
    }
}
