import BatonInternals
import Testing

@Suite struct SplitMix64Tests {
    /// The reference sequence for seed 0 (Vigna's splitmix64.c): a generator that differs from
    /// it would change every seeded workload and test.
    @Test func matchesTheReferenceSequence() {
        var generator = SplitMix64(seed: 0)
        #expect(generator.next() == 0xE220_A839_7B1D_CDAF)
        #expect(generator.next() == 0x6E78_9E6A_A1B9_65F4)
        #expect(generator.next() == 0x06C4_5D18_8009_454F)
    }

    @Test func sameSeedSameSequenceOtherSeedOtherSequence() {
        var a = SplitMix64(seed: 42)
        var b = SplitMix64(seed: 42)
        var c = SplitMix64(seed: 43)
        let first = (0..<100).map { _ in a.next() }
        #expect(first == (0..<100).map { _ in b.next() })
        #expect(first != (0..<100).map { _ in c.next() })
    }

    @Test func chanceIsNeverForZeroAndAlwaysForAHundred() {
        var generator = SplitMix64(seed: 7)
        #expect((0..<1_000).allSatisfy { _ in !generator.chance(0) })
        #expect((0..<1_000).allSatisfy { _ in generator.chance(100) })
        let hits = (0..<10_000).filter { _ in generator.chance(30) }.count
        #expect((2_500...3_500).contains(hits))
    }
}
