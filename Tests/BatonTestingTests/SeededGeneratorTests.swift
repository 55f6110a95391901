import BatonTesting
import Testing

@Suite struct SeededGeneratorTests {
    /// The reference sequence for seed 0 (SplitMix64): a generator that differs from it would
    /// change every seeded workload and test.
    @Test func matchesTheReferenceSequence() {
        var generator = SeededGenerator(seed: 0)
        #expect(generator.next() == 0xE220_A839_7B1D_CDAF)
        #expect(generator.next() == 0x6E78_9E6A_A1B9_65F4)
    }

    /// The seed a generator reports replays its sequence, also for a fresh one.
    @Test func itsSeedReplaysIt() {
        var fresh = SeededGenerator.fresh()
        var replay = SeededGenerator(seed: fresh.seed)
        #expect((0..<100).map { _ in fresh.next() } == (0..<100).map { _ in replay.next() })
        #expect(SeededGenerator(seed: 42).seed == 42)
    }

    @Test func chanceIsNeverAtZeroOrLessAndAlwaysAtAHundredOrMore() {
        var generator = SeededGenerator(seed: 7)
        #expect((0..<1_000).allSatisfy { _ in !generator.chance(0) && !generator.chance(-5) })
        #expect((0..<1_000).allSatisfy { _ in generator.chance(100) && generator.chance(150) })
    }
}
