import BatonInternals
import BatonJobs
import BatonLocks
import BatonTestSupport
import Dispatch
import Foundation
import Testing

/// `addJob` while every slot of the queue is busy: the job waits in the queue's inbox until a
/// worker takes it in, and must behave exactly as a job added any other way.
@Suite struct AddJobTests {
    /// A serial queue whose one slot is held by a job that runs until `release()`.
    final class BusyQueue: Sendable {
        let queue: JobQueue
        private let gate = DispatchSemaphore(value: 0)
        private let started = DispatchSemaphore(value: 0)

        init(name: String, maxConcurrentJobs: Int = 1) {
            queue = JobQueue(name: name, maxConcurrentJobs: maxConcurrentJobs)
            for _ in 0..<maxConcurrentJobs {
                queue.addJob { [gate, started] in
                    started.signal()
                    gate.wait()
                }
            }
            for _ in 0..<maxConcurrentJobs { started.wait() }
        }

        func release() { releaser() }

        /// Releases the busy jobs; holds the gate, not the queue.
        var releaser: @Sendable () -> Void {
            let (gate, count) = (gate, queue.maxConcurrentJobs)
            return { for _ in 0..<count { gate.signal() } }
        }
    }

    /// Jobs added while the slot is busy, through `addJob` and `add` in turn, start by priority
    /// and then in the order added, as on a suspended queue.
    @Test(.timeLimit(.minutes(1)), arguments: 0..<3)
    func busySerialQueueStartsByPriorityThenFIFO(seed: Int) throws {
        let busy = BusyQueue(name: "busy-serial")
        let started = Log<Int>()
        var random = SplitMix64(seed: UInt64(seed))
        var expected: [(priority: JobPriority, index: Int)] = []
        for index in 0..<300 {
            let priority = JobPriority.allCases.randomElement(using: &random)!
            expected.append((priority, index))
            if index % 3 == 2 {
                try busy.queue.add(BlockJob(priority: priority) { started.append(index) })
            } else {
                busy.queue.addJob(priority: priority) { started.append(index) }
            }
        }
        #expect(busy.queue.jobCount == 301)
        #expect(started.all.isEmpty)
        busy.release()
        #expect(drain(busy.queue))
        let order = expected.sorted { $0.priority != $1.priority ? $0.priority > $1.priority : $0.index < $1.index }
        #expect(started.all == order.map(\.index))
    }

    /// Cancelling, re-prioritising and adding a dependency to a job that has not left the
    /// inbox, or making another job wait for it: each acts at once, as on any queued job.
    @Test(.timeLimit(.minutes(1)))
    func aJobInTheInboxCanBeChanged() throws {
        let busy = BusyQueue(name: "busy-changes")
        let queue = busy.queue
        let started = Log<String>()
        let first = queue.addJob { started.append("first") }
        let cancelled = queue.addJob { started.append("cancelled") }
        cancelled.cancel()
        #expect(cancelled.state.tag == "cancelled")
        #expect(queue.jobCount == 2)  // the busy job and first

        let raised = queue.addJob { started.append("raised") }
        raised.priority = .high

        let upstream = queue.addJob { started.append("upstream") }
        let downstream = BlockJob(name: "downstream") { started.append("downstream") }
        try downstream.addDependency(upstream)
        try queue.add(downstream)

        let waiting = queue.addJob { started.append("waiting") }
        let dependency = BlockJob(name: "dependency") { started.append("dependency") }
        try waiting.addDependency(dependency)
        #expect(waiting.state.tag == "pending")
        #expect(queue.jobCount == 6)

        busy.release()
        #expect(eventually { queue.jobCount == 1 })  // only `waiting` is left
        #expect(started.all == ["raised", "first", "upstream", "downstream"])
        #expect(waiting.state.tag == "pending")
        try queue.add(dependency)
        #expect(drain(queue))
        #expect(started.all == ["raised", "first", "upstream", "downstream", "dependency", "waiting"])
        #expect([first, raised, upstream, downstream, waiting].allSatisfy { $0.state.tag == "succeeded" })
    }

    /// Both waits, `jobCount` and `cancelAll` count jobs still in the inbox: a wait that
    /// began before they were added does not end when the last older job finishes.
    @Test(.timeLimit(.minutes(1)))
    func queueWideCallsSeeTheInbox() async throws {
        let busy = BusyQueue(name: "busy-waits")
        let ran = Counter()
        let waited = Counter()
        let waiter = Thread {
            busy.queue.waitUntilAllJobsAreFinished()
            waited.increment()
        }
        waiter.start()
        let asyncWaiter = Task {
            await busy.queue.allJobsFinished()
            return ran.value
        }
        usleep(50_000)  // lets both waits begin before the jobs below are added
        let holding = DispatchSemaphore(value: 0)
        let hold = DispatchSemaphore(value: 0)
        busy.queue.addJob {
            holding.signal()
            hold.wait()
            ran.increment()
        }
        for _ in 0..<49 { busy.queue.addJob { ran.increment() } }
        busy.release()
        holding.wait()  // the busy job has finished; the first inbox job is running
        usleep(20_000)
        #expect(waited.value == 0)  // 50 jobs are unfinished
        hold.signal()
        #expect(await asyncWaiter.value == 50)
        #expect(eventually { waited.value == 1 })
        #expect(ran.value == 50)

        let counted = BusyQueue(name: "busy-counts")
        for _ in 0..<50 { counted.queue.addJob { ran.increment() } }
        #expect(counted.queue.jobCount == 51)
        let cancelled = (0..<50).map { _ in counted.queue.addJob { ran.increment() } }
        counted.queue.cancelAll()
        #expect(cancelled.allSatisfy { $0.state.tag == "cancelled" })
        counted.release()
        #expect(drain(counted.queue))
        #expect(ran.value == 50)  // the 50 counted jobs were cancelled too; none of them ran
    }

    /// A queue whose owner let go of it while jobs sit in its inbox still runs them all.
    @Test(.timeLimit(.minutes(1)))
    func aDroppedQueueRunsItsInboxJobs() {
        let ran = Counter()
        weak var weakQueue: JobQueue?
        var release: (@Sendable () -> Void)?
        do {
            let busy = BusyQueue(name: "busy-dropped")
            for _ in 0..<1_000 { busy.queue.addJob { ran.increment() } }
            weakQueue = busy.queue
            release = busy.releaser
        }
        #expect(weakQueue == nil)  // nothing outside refers to the queue now
        release?()
        #expect(eventually { ran.value == 1_000 })
    }

    /// Several threads add jobs in bursts, pausing so that the workers run out of work and give
    /// their slots back, while another thread reads `jobCount` and waits for the queue: every
    /// job runs exactly once, and none is left behind in the inbox (which would hang the wait).
    @Test(.timeLimit(.minutes(1)), arguments: [1, 2, 4])
    func burstsFromManyThreadsAllRun(maxConcurrentJobs: Int) throws {
        let queue = JobQueue(name: "bursts-\(maxConcurrentJobs)", maxConcurrentJobs: maxConcurrentJobs)
        let producers = 4
        let perProducer = 20_000
        let runs = Protected(Array(repeating: UInt8(0), count: producers * perProducer))
        let producing = Counter()
        let overCounted = Counter()
        let finished = DispatchGroup()
        for producer in 0..<producers {
            finished.enter()
            Thread {
                var random = SplitMix64(seed: UInt64(producer))
                for index in 0..<perProducer {
                    let slot = producer * perProducer + index
                    queue.addJob { runs.write { $0[slot] &+= 1 } }
                    if Int.random(in: 0..<500, using: &random) == 0 {
                        usleep(UInt32.random(in: 0..<300, using: &random))
                    }
                }
                producing.increment()
                finished.leave()
            }.start()
        }
        finished.enter()
        Thread {
            // Counts never exceed what was added, and waits return while jobs keep coming.
            while producing.value < producers {
                if queue.jobCount > producers * perProducer { overCounted.increment() }
                queue.waitUntilAllJobsAreFinished()
            }
            finished.leave()
        }.start()
        #expect(finished.wait(timeout: .now() + testDeadline) == .success)
        #expect(drain(queue))
        #expect(queue.jobCount == 0)
        #expect(overCounted.value == 0)
        let counts = runs.value
        #expect(counts.allSatisfy { $0 == 1 }, "first job not run exactly once: \(counts.firstIndex { $0 != 1 } ?? -1)")
    }
}
