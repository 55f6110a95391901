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
/// A key's four counters lie in one 64-byte block, the hash's low bits choosing the block, each
/// row a quarter of it (16 counters) and the hash's high bits the counter in each quarter, as in
/// Caffeine's sketch since 3.0. A lookup then touches one cache line of the sketch, not four.
///
/// Increments run under the shard's shared (read) lock, from several readers at once: each
/// counter is an atomic byte, loaded and stored with relaxed ordering. Two readers that bump
/// the same counter together may count once, which only makes the estimate a little lower —
/// an approximation the policy tolerates, as it tolerates collisions. A counter already at 15
/// is not written, so a hot key's hits leave its counters' cache line shared. Growth and
/// aging run under the exclusive lock.
///
/// A plain pointer-backed value like ``AtomicSlots``: the shard owns the memory; ``grown(toHold:)``
/// frees the old buffer and the shard's `deinit` frees the last one.
@usableFromInline
struct FrequencySketch {
    /// Block-major: block `k` holds counters `k * 64 ..< (k + 1) * 64`, row `r`'s quarter of it
    /// from `k * 64 + r * 16`. Aligned to 64 bytes, so that a block is one cache line.
    @usableFromInline let counters: AtomicSlots<UInt8>
    /// Increments that raised some counter since the last halving (relaxed, lossy like the
    /// counters).
    @usableFromInline let samples: AtomicSlots<Int>
    /// Blocks minus one: the blocks are a power of two.
    @usableFromInline let blockMask: Int
    /// The entries the sketch is sized for (a power of two).
    @usableFromInline let capacity: Int

    @usableFromInline static var rows: Int { 4 }
    /// Counters per row for each entry of ``capacity``: with fewer, collisions among the many
    /// keys seen once blur the estimates of the keys that matter.
    @usableFromInline static var countersPerEntry: Int { 8 }
    /// Counted increments, per entry of ``capacity``, between two halvings.
    @usableFromInline static var samplesPerEntry: Int { 10 }
    @usableFromInline static var maximum: UInt8 { 15 }
    /// Counters (bytes) per block: a cache line.
    @usableFromInline static var blockSize: Int { 64 }
    /// Counters per row in a block.
    @usableFromInline static var rowSize: Int { blockSize / rows }
    /// Every counter: `rows` × `countersPerEntry` per entry of ``capacity``.
    @usableFromInline var counterCount: Int { (blockMask + 1) * Self.blockSize }

    @usableFromInline
    init(capacity: Int) {
        var rounded = 16
        while rounded < capacity { rounded <<= 1 }
        self.capacity = rounded
        // 16 entries and up, 32 counters each: 8 blocks at least, a power of two.
        let blocks = rounded * Self.countersPerEntry * Self.rows / Self.blockSize
        blockMask = blocks - 1
        counters = AtomicSlots(capacity: blocks * Self.blockSize, initial: 0, alignment: Self.blockSize)
        samples = AtomicSlots(capacity: 1, initial: 0)
    }

    /// The four counter positions of a hash, one per row, in one block: the hash mixed once
    /// (SplitMix64's finaliser, so that keys of one shard, which share the hash's low bits,
    /// still spread over every block), its low bits the block and its top 16 bits, 4 a row, the
    /// counter in each row's quarter.
    @inlinable @inline(__always)
    func positions(_ hash: Int) -> (Int, Int, Int, Int) {
        let mixed = Self.mix(UInt64(truncatingIfNeeded: hash))
        let block = (Int(truncatingIfNeeded: mixed) & blockMask) &* Self.blockSize
        let within = Int(truncatingIfNeeded: mixed >> 48)
        return (
            block + (within & 15),
            block + Self.rowSize + ((within >> 4) & 15),
            block + 2 * Self.rowSize + ((within >> 8) & 15),
            block + 3 * Self.rowSize + ((within >> 12) & 15)
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

    /// Halves every counter and the sample count. Exclusive: no reader increments meanwhile, so
    /// the counters are read and written as plain memory, eight to a word.
    @usableFromInline
    func age() {
        let memory = UnsafeMutableRawPointer(counters.base)
        for offset in stride(from: 0, to: counterCount, by: 8) {
            let word = memory.load(fromByteOffset: offset, as: UInt64.self)
            // Each byte shifted right, less the bit its neighbour shifted into it.
            let halved = (word >> 1) & 0x7F7F_7F7F_7F7F_7F7F
            if word != 0 { memory.storeBytes(of: halved, toByteOffset: offset, as: UInt64.self) }
        }
        samples.store(samples.load(0) / 2, at: 0)
    }

    /// A sketch sized for at least `entries`, keeping what this one counted (each new block
    /// starts as the old block it folds onto: a hash's block in the larger sketch keeps the
    /// low bits of its old one, and its place within the block does not change); frees this
    /// one. Exclusive.
    ///
    /// So the larger sketch is this one over and over, copied as plain memory: no reader
    /// increments meanwhile.
    @usableFromInline
    func grown(toHold entries: Int) -> FrequencySketch {
        let copy = FrequencySketch(capacity: entries)
        precondition(copy.counterCount >= counterCount, "FrequencySketch: grown(toHold:) to fewer entries")
        let source = UnsafeRawPointer(counters.base)
        let destination = UnsafeMutableRawPointer(copy.counters.base)
        for offset in stride(from: 0, to: copy.counterCount, by: counterCount) {
            (destination + offset).copyMemory(from: source, byteCount: counterCount)
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
