import Atomics
import BatonTesting
import Dispatch
import Foundation
import Testing

@Suite struct GatedThreadsTests {
    /// Every body is running at the same time: each waits, spinning, until all have arrived, which
    /// could not happen if a thread started only after another finished.
    @Test(.timeLimit(.minutes(1)), arguments: [1, 2, 8])
    func everyThreadRunsAtOnceAndEveryIndexOnce(count: Int) {
        let arrived = ManagedAtomic(0)
        let seen = ManagedAtomic<UInt64>(0)
        let threads = GatedThreads(count: count) { index in
            seen.wrappingIncrement(by: 1 << UInt64(index), ordering: .relaxed)
            arrived.wrappingIncrement(ordering: .acquiringAndReleasing)
            while arrived.load(ordering: .acquiring) < count {}
        }
        let early = arrived.load(ordering: .relaxed)
        #expect(early == 0, "a body ran before the gate opened")
        threads.open()
        #expect(threads.join(timeout: .seconds(30)) == 0)
        let indices = seen.load(ordering: .relaxed)
        #expect(indices == (1 << UInt64(count)) - 1)
    }

    @Test(.timeLimit(.minutes(1)))
    func joinReportsTheThreadsStillRunningAndALaterJoinWaitsForThem() {
        let release = DispatchSemaphore(value: 0)
        let returning = DispatchSemaphore(value: 0)
        let threads = GatedThreads(count: 3) { index in
            if index == 1 { release.wait() } else { returning.signal() }
        }
        threads.open()
        // Threads 0 and 2 are past their bodies; thread 1 stays stuck until it is released, so
        // the join ends at its deadline with exactly one stuck, however slow the machine.
        #expect(returning.wait(timeout: .now() + .seconds(30)) == .success)
        #expect(returning.wait(timeout: .now() + .seconds(30)) == .success)
        #expect(threads.join(timeout: .seconds(2)) == 1)
        release.signal()
        #expect(threads.join(timeout: .seconds(30)) == 0)
        #expect(threads.join() == 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func runOnNewThreadRunsTheBodyOffTheCallingThread() {
        let done = DispatchSemaphore(value: 0)
        let caller = ObjectIdentifier(Thread.current)
        let ranElsewhere = ManagedAtomic(false)
        runOnNewThread {
            ranElsewhere.store(ObjectIdentifier(Thread.current) != caller, ordering: .relaxed)
            done.signal()
        }
        #expect(done.wait(timeout: .now() + .seconds(30)) == .success)
        let elsewhere = ranElsewhere.load(ordering: .relaxed)
        #expect(elsewhere)
    }
}
