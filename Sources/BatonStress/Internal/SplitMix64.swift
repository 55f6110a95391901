/// A small, fast, seedable generator (SplitMix64): each thread of a run draws its operations
/// from its own, so drawing adds no shared state to the race under test.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    /// A generator seeded from the system's random source.
    static func fresh() -> SplitMix64 {
        var system = SystemRandomNumberGenerator()
        return SplitMix64(seed: system.next())
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// True with probability `percent` / 100.
    mutating func chance(_ percent: Int) -> Bool {
        Int.random(in: 0..<100, using: &self) < percent
    }
}
