/// A small, fast, seedable random number generator (Steele, Lea and Flood's SplitMix64), so that
/// workloads, stress runs and randomised tests are the same for the same seed on every run and
/// every platform.
///
/// Not for anything that needs unpredictability: the next value follows from the last.
package struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension SplitMix64 {
    /// A generator seeded from the system's random source, for a run that should differ from the
    /// last (print the seed if it must be replayed).
    package static func fresh() -> SplitMix64 {
        var system = SystemRandomNumberGenerator()
        return SplitMix64(seed: system.next())
    }

    /// True with probability `percent` / 100.
    package mutating func chance(_ percent: Int) -> Bool {
        Int.random(in: 0..<100, using: &self) < percent
    }
}
