import Testing

@testable import BatonCache

/// The per-slot atomics that readers update under the shard's shared lock: the last-read time of
/// `timeToIdle`, which only ever moves forward.
@Suite(.timeLimit(.minutes(1)))
struct AtomicSlotsTests {
    @Test("a raise never moves a slot back, whoever stamped it last")
    func raiseNeverMovesBack() {
        let slots = AtomicSlots<Int64>(capacity: 2, initial: 5)
        defer { slots.deallocate() }
        slots.raise(to: 3, at: 0)
        #expect(slots.load(0) == 5)
        slots.raise(to: 9, at: 0)
        #expect(slots.load(0) == 9)
        #expect(slots.load(1) == 5)
    }

    /// Each thread raises the one slot through a sequence of its own, interleaved with the
    /// others', so that a compare-and-exchange often finds another thread's value there: the
    /// loser must retry from the value it found. A loser that retried from its stale value would
    /// fail for ever, and the bounded join names it.
    @Test("threads raising one slot at once leave the largest value, and none spins on a stale value")
    func racingRaisesKeepTheLargest() async {
        let slots = AtomicSlots<Int64>(capacity: 1, initial: 0)
        defer { slots.deallocate() }
        let threads = 4
        let perThread = 50_000
        let bodies: [@Sendable () -> Void] = (0..<threads).map { thread in
            {
                for step in 0..<perThread {
                    slots.raise(to: Int64(step * threads + thread + 1), at: 0)
                }
            }
        }
        #expect(await raceThreads(bodies, timeout: .seconds(30)), "a raise did not finish: it spins on a stale value")
        #expect(slots.load(0) == Int64(perThread * threads))
    }
}
