import BatonInternals

/// A small, fast random number generator whose sequence is fixed by its seed (SplitMix64), so
/// that a randomised test or workload does the same on every run and every platform, and a
/// failure found with one seed replays from that seed.
///
/// ```swift
/// var generator = SeededGenerator(seed: 42)
/// let key = Int.random(in: 0..<100, using: &generator)   // the same key on every run
/// ```
///
/// Not for anything that needs unpredictability: the next value follows from the last.
///
/// Thread safety: a value type; each thread uses its own copy.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var base: SplitMix64

    /// The seed the generator started from: print it with a failure so that the run replays.
    public let seed: UInt64

    /// A generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) {
        self.seed = seed
        base = SplitMix64(seed: seed)
    }

    /// A generator seeded from the system's random source, for a run that should differ from the
    /// last (its ``seed`` replays it).
    public static func fresh() -> SeededGenerator {
        var system = SystemRandomNumberGenerator()
        return SeededGenerator(seed: system.next())
    }

    /// The next value of the sequence.
    public mutating func next() -> UInt64 { base.next() }

    /// `true` with probability `percent` / 100: never for 0 or less, always for 100 or more.
    public mutating func chance(_ percent: Int) -> Bool { base.chance(percent) }
}
