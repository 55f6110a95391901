import Atomics
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

    /// One thread keeps raising the slot while another stores a million values into it that it
    /// never held before, so the raising thread's compare-and-exchange often finds a value it did
    /// not read: it must retry from the value it found. A raise that retried from its stale value
    /// would fail for ever (the slot never holds that value again), and the bounded join names it.
    @Test("a raise whose exchange finds another value retries from that value, and ends")
    func aRaiseRetriesFromTheValueItFound() async {
        let slots = AtomicSlots<Int64>(capacity: 1, initial: 0)
        defer { slots.deallocate() }
        let storing = ManagedAtomic(true)
        let highest = ManagedAtomic<Int64>(0)
        let finished = await raceThreads(
            [
                {
                    var value: Int64 = 0
                    while storing.load(ordering: .acquiring) {
                        value += 1
                        slots.raise(to: value, at: 0)
                    }
                    highest.store(value, ordering: .relaxed)
                },
                {
                    for next in 1...1_000_000 { slots.store(-Int64(next), at: 0) }
                    storing.store(false, ordering: .releasing)
                },
            ], timeout: .seconds(30))
        #expect(finished, "a raise did not end: it retries from a value the slot no longer holds")
        let last = highest.load(ordering: .relaxed)
        slots.raise(to: last + 1, at: 0)
        #expect(slots.load(0) == last + 1)
    }
}
