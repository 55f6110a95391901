import Atomics
import BatonInternals
import BatonLocks
import CBatonPlatform
import Dispatch

/// Threads kept for the whole of a check, so that a round costs a wake-up, not a thread's
/// creation. Each round they wake, meet at a spinning barrier (so that their first operations
/// really overlap: a semaphore's wake-up alone staggers them by microseconds), run the round's
/// body and report back.
///
/// The driver runs one round at a time; after a round that did not finish, the team is broken
/// and only ``dismiss()`` may follow.
final class WorkerTeam: Sendable {
    let count: Int
    private let wakes: [DispatchSemaphore]
    private let finished = DispatchSemaphore(value: 0)
    /// Arrivals at the start barrier, over every round: round `r` starts at `r * count`.
    private let arrivals = ManagedAtomic<Int>(0)
    private let stopping = ManagedAtomic<Bool>(false)
    private let body = Protected<(@Sendable (Int) -> Void)?>(nil)

    /// Spins at the barrier before yielding the processor: a round starts within microseconds.
    private static var spinsBeforeYield: Int { 1_000 }

    init(count: Int) {
        self.count = count
        wakes = (0..<count).map { _ in DispatchSemaphore(value: 0) }
        for index in 0..<count {
            runOnNewThread { [self] in work(index) }
        }
    }

    /// Runs `body(index)` on every thread at once; false if some had not returned by `deadline`.
    func run(until deadline: ContinuousClock.Instant, _ body: @escaping @Sendable (Int) -> Void) -> Bool {
        self.body.write { $0 = body }
        for wake in wakes { wake.signal() }
        for _ in 0..<count {
            let left = deadline - ContinuousClock.now
            guard left > .zero, finished.wait(timeout: .now() + left.dispatchInterval) == .success else {
                return false
            }
        }
        return true
    }

    /// Lets the threads end: at once if they wait for a round, or when a stuck one returns.
    func dismiss() {
        stopping.store(true, ordering: .releasing)
        for wake in wakes { wake.signal() }
    }

    private func work(_ index: Int) {
        var round = 0
        while true {
            wakes[index].wait()
            if stopping.load(ordering: .acquiring) { return }
            round += 1
            let body = self.body.value
            arrivals.wrappingIncrement(ordering: .acquiringAndReleasing)
            var spins = 0
            while arrivals.load(ordering: .acquiring) < round * count {
                spins += 1
                if spins < Self.spinsBeforeYield { baton_cpu_relax() } else { sched_yield() }
            }
            body?(index)
            finished.signal()
        }
    }
}

/// Spins for `iterations` pause instructions: a seeded delay before an operation, so that the
/// rounds try many alignments of the threads' operations.
func spinDelay(_ iterations: Int) {
    for _ in 0..<iterations { baton_cpu_relax() }
}
