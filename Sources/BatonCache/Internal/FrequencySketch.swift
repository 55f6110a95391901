import Atomics

/// How often each key has been asked for lately, approximately: the count-min sketch that
/// ``EvictionPolicy/tinyLFU`` consults to decide whether a new entry is worth more than the
/// entry it would displace (Einziger, Friedman and Manes, "TinyLFU", ACM ToS 2017).
///
/// Four rows of saturating counters (0...15), one counter per row for each key, chosen from
/// the key's hash; a key's estimate is the smallest of its four counters, so
/// collisions can only raise it. The rows are 8 counters per entry the shard is sized for
/// (``capacity``), which keeps collisions rare enough for the estimates to tell a key asked
/// for twice from one asked for once. Every ``capacity`` × 10 counted increments, all counters
/// are halved, so the sketch follows a popularity that shifts instead of remembering forever.
///
/// Increments run under the shard's shared (read) lock, from several readers at once: each
/// counter is an atomic byte, loaded and stored with relaxed ordering. Two readers that bump
/// the same counter together may count once, which only makes the estimate a little lower —
/// an approximation the policy tolerates, as it tolerates collisions. A counter already at 15
/// is not written, so a hot key's hits leave its counters' cache lines shared. Growth and
/// aging run under the exclusive lock.
///
/// A plain pointer-backed value like ``AtomicSlots``: the shard owns the memory; ``grown(toHold:)``
/// frees the old buffer and the shard's `deinit` frees the last one.
@usableFromInline
struct FrequencySketch {
    /// Row-major: row `r` holds counters `r * width ..< (r + 1) * width`.
    @usableFromInline let counters: AtomicSlots<UInt8>
    /// Increments that raised some counter since the last halving (relaxed, lossy like the
    /// counters).
    @usableFromInline let samples: AtomicSlots<Int>
    /// Counters per row, a power of two.
    @usableFromInline let width: Int
    /// The entries the sketch is sized for (a power of two).
    @usableFromInline let capacity: Int

    @usableFromInline static var rows: Int { 4 }
    /// Counters per row for each entry of ``capacity``: with fewer, collisions among the many
    /// keys seen once blur the estimates of the keys that matter.
    @usableFromInline static var countersPerEntry: Int { 8 }
    /// Counted increments, per entry of ``capacity``, between two halvings.
    @usableFromInline static var samplesPerEntry: Int { 10 }
    @usableFromInline static var maximum: UInt8 { 15 }

    @usableFromInline
    init(capacity: Int) {
        var rounded = 16
        while rounded < capacity { rounded <<= 1 }
        self.capacity = rounded
        width = rounded * Self.countersPerEntry
        counters = AtomicSlots(capacity: width * Self.rows, initial: 0)
        samples = AtomicSlots(capacity: 1, initial: 0)
    }

    /// The four counter positions of a hash, one per row: the halves of two successive
    /// mixes of the hash (SplitMix64's finaliser), so that keys of one shard, which share the
    /// hash's low bits, still spread over every counter, and two keys that meet in one row
    /// rarely meet in another.
    @inlinable
    func positions(_ hash: Int) -> (Int, Int, Int, Int) {
        let first = Self.mix(UInt64(truncatingIfNeeded: hash))
        let second = Self.mix(first)
        let mask = UInt64(width - 1)
        return (
            Int(truncatingIfNeeded: first & mask),
            width + Int(truncatingIfNeeded: (first >> 32) & mask),
            2 * width + Int(truncatingIfNeeded: second & mask),
            3 * width + Int(truncatingIfNeeded: (second >> 32) & mask)
        )
    }

    @inlinable
    static func mix(_ value: UInt64) -> UInt64 {
        var mixed = value &+ 0x9E37_79B9_7F4A_7C15
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// Counts one request for the key with this hash. Shared: relaxed atomics only.
    @inlinable
    func increment(_ hash: Int) {
        let (a, b, c, d) = positions(hash)
        // Each counter is raised before any result is combined: `||` would stop at the first.
        let raisedA = raise(a)
        let raisedB = raise(b)
        let raisedC = raise(c)
        let raisedD = raise(d)
        if raisedA || raisedB || raisedC || raisedD { samples.store(samples.load(0) &+ 1, at: 0) }
    }

    /// Adds one to the counter at `position` unless it is saturated; returns whether it did.
    @inlinable
    func raise(_ position: Int) -> Bool {
        let count = counters.load(position)
        guard count < Self.maximum else { return false }
        counters.store(count &+ 1, at: position)
        return true
    }

    /// The estimated requests for the key with this hash since about the last halving.
    @inlinable
    func estimate(_ hash: Int) -> UInt8 {
        let (a, b, c, d) = positions(hash)
        return min(min(counters.load(a), counters.load(b)), min(counters.load(c), counters.load(d)))
    }

    /// Whether enough increments were counted that the counters should be halved.
    @inlinable var isDueForAging: Bool { samples.load(0) >= capacity * Self.samplesPerEntry }

    /// Halves every counter and the sample count. Exclusive.
    @usableFromInline
    func age() {
        for position in 0..<(width * Self.rows) {
            let count = counters.load(position)
            if count != 0 { counters.store(count >> 1, at: position) }
        }
        samples.store(samples.load(0) / 2, at: 0)
    }

    /// A sketch sized for at least `entries`, keeping what this one counted (each new counter
    /// starts from the old counter it folds onto); frees this one. Exclusive.
    @usableFromInline
    func grown(toHold entries: Int) -> FrequencySketch {
        let copy = FrequencySketch(capacity: entries)
        let mask = width - 1
        for row in 0..<Self.rows {
            for column in 0..<copy.width {
                copy.counters.store(counters.load(row * width + (column & mask)), at: row * copy.width + column)
            }
        }
        copy.samples.store(samples.load(0), at: 0)
        deallocate()
        return copy
    }

    /// Frees the memory. Called once, by its owner.
    @usableFromInline
    func deallocate() {
        counters.deallocate()
        samples.deallocate()
    }
}

// Only atomic operations reach the memory; the shard's lock orders its growth and release.
extension FrequencySketch: @unchecked Sendable {}
