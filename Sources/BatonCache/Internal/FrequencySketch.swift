import Atomics

/// How often each key has been asked for lately, approximately: the count-min sketch that
/// ``EvictionPolicy/tinyLFU`` consults to decide whether a new entry is worth more than the
/// entry it would displace (Einziger, Friedman and Manes, "TinyLFU", ACM ToS 2017).
///
/// Four rows of saturating counters (0...15), one counter per row for each key, chosen from
/// the key's hash; a key's estimate is the smallest of its four counters, so collisions can
/// only raise it. The rows are 4 counters per entry the shard is sized for (``capacity``), 16
/// a key in all, as in Caffeine's sketch. An increment raises only the counters that hold the
/// estimate (the count-min sketch's conservative update): a counter a colliding key has raised
/// further is left alone, so collisions raise estimates less. Every ``capacity`` × 10 counted
/// increments, all counters are halved, so the sketch follows a popularity that shifts instead
/// of remembering forever.
///
/// A counter is 4 bits, two to a byte, so the sketch is 8 bytes an entry. Its size is its
/// cost: a lookup of a key outside the hot set reads and writes a random line of it. With the
/// sketch this one replaced, a byte a counter and 8 a row (32 bytes an entry), TinyLFU's
/// operations took 1.6 to 1.9 times SIEVE's on one thread (the bench's 90/10 mix over a million
/// keys, 100,000 cached); with this one, 1.40 to 1.44 times, the two builds alternating. Its hit
/// ratios on the bench's twelve streams are at or above the old one's (by up to 0.004):
/// conservative update makes up for the fewer counters.
///
/// A key's four counters lie in one 64-byte block, the hash's low bits choosing the block, each
/// row a quarter of it (32 counters, 16 bytes) and the hash's high bits the counter in each
/// quarter, as in Caffeine's sketch since 3.0. A lookup then touches one cache line of the
/// sketch, not four.
///
/// Increments run under the shard's shared (read) lock, from several readers at once: each
/// byte is atomic, loaded and stored with relaxed ordering. Two readers that bump the same
/// counter together, or the two counters of one byte, may count once, which only makes an
/// estimate a little lower — an approximation the policy tolerates, as it tolerates
/// collisions. A counter already at 15 is not written, so a hot key's hits leave its counters'
/// cache line shared. Growth and aging run under the exclusive lock.
///
/// A plain pointer-backed value like ``AtomicSlots``: the shard owns the memory; ``grown(toHold:)``
/// frees the old buffer and the shard's `deinit` frees the last one.
@usableFromInline
struct FrequencySketch {
    /// Block-major, two counters a byte, the even one in the low 4 bits: block `k` holds
    /// counters `k * 128 ..< (k + 1) * 128` (bytes `k * 64 ..< (k + 1) * 64`), row `r`'s quarter
    /// of it from counter `k * 128 + r * 32`. Aligned to 64 bytes, so that a block is one cache
    /// line. Read and written through ``counter(at:)``, ``setCounter(_:at:)`` and ``increment(_:)``.
    @usableFromInline let counters: AtomicSlots<UInt8>
    /// Increments that raised some counter since the last halving (relaxed, lossy like the
    /// counters).
    @usableFromInline let samples: AtomicSlots<Int>
    /// Blocks minus one: the blocks are a power of two.
    @usableFromInline let blockMask: Int
    /// The entries the sketch is sized for (a power of two).
    @usableFromInline let capacity: Int

    @usableFromInline static var rows: Int { 4 }
    /// Counters per row for each entry of ``capacity``: 16 a key in all, as in Caffeine. Twice
    /// as many raised the bench's hit ratios by at most 0.004, for twice the memory.
    @usableFromInline static var countersPerEntry: Int { 4 }
    /// The fewest blocks a sketch has (4 KiB, the size of 512 entries' sketch): in a small
    /// shard, 16 counters an entry leave so few in all that a key read once often meets keys
    /// read many times in all four rows, and looks as popular as they are. (In the scan test of
    /// a cache of 100 entries, 7 runs of 10 lost a popular key without this floor; with it, 1 of
    /// 80.) The memory is a few KiB a shard.
    @usableFromInline static var minimumBlocks: Int { 64 }
    /// Counted increments, per entry of ``capacity``, between two halvings.
    @usableFromInline static var samplesPerEntry: Int { 10 }
    /// The most a 4-bit counter holds.
    @usableFromInline static var maximum: UInt8 { 15 }
    /// Bytes per block: a cache line.
    @usableFromInline static var blockSize: Int { 64 }
    /// Counters per block: two a byte.
    @usableFromInline static var countersPerBlock: Int { blockSize * 2 }
    /// Counters per row in a block.
    @usableFromInline static var rowSize: Int { countersPerBlock / rows }
    /// Every counter: `rows` × `countersPerEntry` per entry of ``capacity``.
    @usableFromInline var counterCount: Int { (blockMask + 1) * Self.countersPerBlock }
    /// The counters' bytes.
    @usableFromInline var byteCount: Int { (blockMask + 1) * Self.blockSize }

    @usableFromInline
    init(capacity: Int) {
        var rounded = 16
        while rounded < capacity { rounded <<= 1 }
        self.capacity = rounded
        // 16 counters an entry, a power of two of blocks, and never fewer than `minimumBlocks`.
        let blocks = max(Self.minimumBlocks, rounded * Self.countersPerEntry * Self.rows / Self.countersPerBlock)
        blockMask = blocks - 1
        counters = AtomicSlots(capacity: blocks * Self.blockSize, initial: 0, alignment: Self.blockSize)
        samples = AtomicSlots(capacity: 1, initial: 0)
    }

    /// The four counter positions of a hash, one per row, in one block: the hash mixed once
    /// (SplitMix64's finaliser, so that keys of one shard, which share the hash's low bits,
    /// still spread over every block), its low bits the block and its top 20 bits, 5 a row, the
    /// counter in each row's quarter.
    @inlinable @inline(__always)
    func positions(_ hash: Int) -> (Int, Int, Int, Int) {
        let mixed = Self.mix(UInt64(truncatingIfNeeded: hash))
        let block = (Int(truncatingIfNeeded: mixed) & blockMask) &* Self.countersPerBlock
        let within = Int(truncatingIfNeeded: mixed >> 44)
        return (
            block + (within & 31),
            block + Self.rowSize + ((within >> 5) & 31),
            block + 2 * Self.rowSize + ((within >> 10) & 31),
            block + 3 * Self.rowSize + ((within >> 15) & 31)
        )
    }

    @inlinable
    static func mix(_ value: UInt64) -> UInt64 {
        var mixed = value &+ 0x9E37_79B9_7F4A_7C15
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// Where counter `position`'s 4 bits lie in its byte: 0 for an even one, 4 for an odd one.
    @inlinable @inline(__always)
    static func shift(_ position: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: (position & 1) << 2)
    }

    /// The counter at `position` (0 to 15).
    @inlinable
    func counter(at position: Int) -> UInt8 {
        (counters.load(position >> 1) >> Self.shift(position)) & 15
    }

    /// Sets the counter at `position` to `value` (0 to 15), leaving the other counter of its
    /// byte as it is. Not atomic as a whole: for tests, which own the sketch alone.
    @inlinable
    func setCounter(_ value: UInt8, at position: Int) {
        let shift = Self.shift(position)
        let byte = counters.load(position >> 1)
        counters.store(byte & ~(15 << shift) | (value & 15) << shift, at: position >> 1)
    }

    /// Counts one request for the key with this hash: raises the counters that hold its
    /// estimate, unless they are saturated, and then counts a sample. Shared: relaxed atomics
    /// only.
    ///
    /// Each of the four bytes is loaded once, and a raised byte is stored as loaded plus one in
    /// its counter's 4 bits: below 15 (the estimate is below 15), one more carries nothing into
    /// the byte's other counter. A raise by another thread between the load and the store is
    /// lost, as increments of a count-min sketch may be; a counter never wraps, and never
    /// changes its neighbour.
    @inlinable
    func increment(_ hash: Int) {
        let (a, b, c, d) = positions(hash)
        let (byteA, byteB, byteC, byteD) = (
            counters.load(a >> 1), counters.load(b >> 1), counters.load(c >> 1), counters.load(d >> 1)
        )
        let countA = (byteA >> Self.shift(a)) & 15
        let countB = (byteB >> Self.shift(b)) & 15
        let countC = (byteC >> Self.shift(c)) & 15
        let countD = (byteD >> Self.shift(d)) & 15
        let least = min(min(countA, countB), min(countC, countD))
        guard least < Self.maximum else { return }
        // Conservative update: only the counters at the estimate are raised.
        if countA == least { counters.store(byteA &+ (1 << Self.shift(a)), at: a >> 1) }
        if countB == least { counters.store(byteB &+ (1 << Self.shift(b)), at: b >> 1) }
        if countC == least { counters.store(byteC &+ (1 << Self.shift(c)), at: c >> 1) }
        if countD == least { counters.store(byteD &+ (1 << Self.shift(d)), at: d >> 1) }
        samples.store(samples.load(0) &+ 1, at: 0)
    }

    /// The estimated requests for the key with this hash since about the last halving.
    @inlinable
    func estimate(_ hash: Int) -> UInt8 {
        let (a, b, c, d) = positions(hash)
        return min(min(counter(at: a), counter(at: b)), min(counter(at: c), counter(at: d)))
    }

    /// Whether enough increments were counted that the counters should be halved.
    @inlinable var isDueForAging: Bool { samples.load(0) >= capacity * Self.samplesPerEntry }

    /// Halves every counter and the sample count. Exclusive: no reader increments meanwhile, so
    /// the counters are read and written as plain memory, sixteen to a word.
    @usableFromInline
    func age() {
        let memory = UnsafeMutableRawPointer(counters.base)
        for offset in stride(from: 0, to: byteCount, by: 8) {
            let word = memory.load(fromByteOffset: offset, as: UInt64.self)
            // Each 4-bit counter shifted right, less the bit its neighbour shifted into it.
            let halved = (word >> 1) & 0x7777_7777_7777_7777
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
        precondition(copy.byteCount >= byteCount, "FrequencySketch: grown(toHold:) to fewer entries")
        let source = UnsafeRawPointer(counters.base)
        let destination = UnsafeMutableRawPointer(copy.counters.base)
        for offset in stride(from: 0, to: copy.byteCount, by: byteCount) {
            (destination + offset).copyMemory(from: source, byteCount: byteCount)
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
