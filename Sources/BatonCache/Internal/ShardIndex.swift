/// A shard's hash index from key to value and slot: open addressing with linear probing, the
/// hash, slot, key and value of an entry side by side in one bucket.
///
/// A `Dictionary` here cost a hit two hash computations (one to pick the shard, one inside the
/// dictionary) and two or three cache lines (its occupancy bitmap, its keys array, its values
/// array) on top of the shard's own. The cache hashes a key once, picks the shard with the
/// hash's low bits and passes the hash down; a hit reads one bucket — a 32-byte run for `Int`
/// keys and values, so one line — and compares the stored hash before the key, so a costly `==`
/// runs only on a true match or a full-hash collision.
///
/// Buckets are found from the hash by Fibonacci hashing (a multiply, then the top bits), which
/// spreads even a poor `hashValue` and uses other bits than the shard's. The table doubles
/// before it is three quarters full, so a probe always meets an empty bucket. Removal shifts
/// the following entries back into the hole instead of leaving a tombstone, so lookups never
/// slow down with churn.
///
/// Every entry remembers the slot of the shard's slab it belongs to, and the index keeps the
/// reverse map, slot to bucket, so the shard can remove an entry by slot (an eviction) and read
/// its key or hash.
///
/// A plain pointer, like ``AtomicSlots``: reading it out of the shard's state costs no reference
/// counting. The shard owns the memory and frees it once, with ``deallocate()``; a copy of the
/// index shares it. Lookups are non-mutating and may run together under the shard's read lock;
/// everything else needs the write lock.
@usableFromInline
struct ShardIndex<Key: Hashable, Value> {
    /// The buckets, ``stride`` bytes each: the key's hash (`Int`), its slot (`Int32`, ``noSlot``
    /// while the bucket is empty), then the key and the value, initialized only while full.
    @usableFromInline var base: UnsafeMutableRawPointer
    /// The number of buckets minus one (a power of two minus one), and `Int.bitWidth` minus
    /// log2 of the number of buckets (the shift that leaves the hash's top bits): 32 bits each,
    /// so that with ``base`` they fill two words and a lookup reads them from one cache line
    /// of the shard. A bucket number fits in 32 bits anyway (``bucketOfSlot`` keeps them so).
    @usableFromInline var bucketMask: Int32
    @usableFromInline var homeShift: Int32
    /// Entries stored.
    @usableFromInline var count = 0
    /// For each slot of the shard's slab, the bucket of its entry; ``noSlot`` for a free slot
    /// or one beyond ``slotCapacity``. Raw memory too, so that a copy of the index is a few
    /// words with no reference to count.
    @usableFromInline var bucketOfSlot: UnsafeMutablePointer<Int32>
    @usableFromInline var slotCapacity: Int

    /// An empty index; it grows as entries come.
    @usableFromInline
    init() {
        (base, bucketMask, homeShift) = Self.allocateBuckets(Self.minimumBuckets)
        slotCapacity = Self.minimumBuckets
        bucketOfSlot = .allocate(capacity: slotCapacity)
        bucketOfSlot.initialize(repeating: noSlot, count: slotCapacity)
    }

    /// Frees the buckets and the entries still in them. Called once, by the owner.
    @usableFromInline
    func deallocate() {
        if count > 0 {
            for bucket in 0...mask where slot(at: bucket) != noSlot {
                keyAddress(bucket).deinitialize(count: 1)
                valueAddress(bucket).deinitialize(count: 1)
            }
        }
        base.deallocate()
        bucketOfSlot.deallocate()
    }

    // MARK: Layout

    /// Buckets a new index starts with.
    @usableFromInline static var minimumBuckets: Int { 8 }

    @inlinable static var slotOffset: Int { MemoryLayout<Int>.size }

    @inlinable static var keyOffset: Int {
        roundedUp(slotOffset + MemoryLayout<Int32>.size, MemoryLayout<Key>.alignment)
    }

    @inlinable static var valueOffset: Int {
        roundedUp(keyOffset + MemoryLayout<Key>.size, MemoryLayout<Value>.alignment)
    }

    @inlinable static var alignment: Int {
        max(MemoryLayout<Int>.alignment, MemoryLayout<Key>.alignment, MemoryLayout<Value>.alignment)
    }

    @inlinable static var stride: Int { roundedUp(valueOffset + MemoryLayout<Value>.size, alignment) }

    @inlinable
    static func roundedUp(_ offset: Int, _ alignment: Int) -> Int {
        (offset + alignment - 1) & ~(alignment - 1)
    }

    /// The number of buckets minus one.
    @inlinable var mask: Int { Int(bucketMask) }

    /// The shift that leaves a spread hash's top bits: `Int.bitWidth` minus log2 of the buckets.
    @inlinable var shift: Int { Int(homeShift) }

    /// `buckets` empty buckets (a power of two, at least ``minimumBuckets``, at most 2^31).
    @usableFromInline
    static func allocateBuckets(_ buckets: Int) -> (base: UnsafeMutableRawPointer, mask: Int32, shift: Int32) {
        let base = UnsafeMutableRawPointer.allocate(byteCount: buckets * stride, alignment: alignment)
        for bucket in 0..<buckets {
            let address = base + bucket * stride
            address.storeBytes(of: 0, as: Int.self)
            address.storeBytes(of: noSlot, toByteOffset: slotOffset, as: Int32.self)
        }
        return (base, Int32(buckets - 1), Int32(Int.bitWidth - buckets.trailingZeroBitCount))
    }

    @inlinable
    func address(_ bucket: Int) -> UnsafeMutableRawPointer {
        base + bucket &* Self.stride
    }

    @inlinable
    func keyAddress(_ bucket: Int) -> UnsafeMutablePointer<Key> {
        (address(bucket) + Self.keyOffset).assumingMemoryBound(to: Key.self)
    }

    @inlinable
    func valueAddress(_ bucket: Int) -> UnsafeMutablePointer<Value> {
        (address(bucket) + Self.valueOffset).assumingMemoryBound(to: Value.self)
    }

    /// Where a probe for `hash` starts: the top bits of the hash times 2^64 / φ.
    @inlinable
    func home(_ hash: Int) -> Int {
        let spread = UInt(bitPattern: hash) &* UInt(truncatingIfNeeded: 0x9E37_79B9_7F4A_7C15 as UInt64)
        return Int(bitPattern: spread &>> UInt(bitPattern: shift))
    }

    // MARK: Reading (shared)

    /// The slot of the entry in `bucket`, or ``noSlot`` if the bucket is empty.
    @inlinable
    func slot(at bucket: Int) -> Int32 {
        address(bucket).load(fromByteOffset: Self.slotOffset, as: Int32.self)
    }

    /// The stored hash of the entry in `bucket` (full).
    @inlinable
    func hash(at bucket: Int) -> Int {
        address(bucket).load(as: Int.self)
    }

    /// The bucket holding `key`, whose `hashValue` is `hash`, or -1 if it is absent. Always
    /// inlined: a call, with its saved registers, costs a lookup about a tenth of its
    /// instructions.
    @inlinable @inline(__always)
    func find(_ key: Key, hash: Int) -> Int {
        var bucket = home(hash)
        while true {
            if slot(at: bucket) == noSlot { return -1 }
            if self.hash(at: bucket) == hash && keyAddress(bucket).pointee == key { return bucket }
            bucket = (bucket &+ 1) & mask
        }
    }

    /// The value in a full `bucket`.
    @inlinable
    func value(at bucket: Int) -> Value {
        valueAddress(bucket).pointee
    }

    /// Whether `slot` holds an entry.
    @inlinable
    func hasEntry(inSlot slot: Int32) -> Bool {
        Int(slot) < slotCapacity && bucketOfSlot[Int(slot)] != noSlot
    }

    /// The key of the entry in `slot`.
    @inlinable
    func key(ofSlot slot: Int32) -> Key {
        keyAddress(Int(bucketOfSlot[Int(slot)])).pointee
    }

    /// The hash of the entry in `slot`.
    @inlinable
    func hash(ofSlot slot: Int32) -> Int {
        hash(at: Int(bucketOfSlot[Int(slot)]))
    }

    /// Calls `body` with every entry's key, value and slot, in bucket order.
    @usableFromInline
    func forEach(_ body: (Key, Value, Int32) -> Void) {
        guard count > 0 else { return }
        for bucket in 0...mask {
            let slot = slot(at: bucket)
            if slot != noSlot { body(keyAddress(bucket).pointee, valueAddress(bucket).pointee, slot) }
        }
    }

    // MARK: Writing (exclusive)

    /// Replaces the value in a full `bucket`, returning the old one.
    @inlinable
    mutating func replaceValue(at bucket: Int, with value: Value) -> Value {
        let address = valueAddress(bucket)
        let old = address.move()
        address.initialize(to: value)
        return old
    }

    /// Adds an entry for `key`, which must be absent, belonging to `slot`. Grows first if the
    /// table would pass three quarters full.
    @inlinable
    mutating func insert(_ key: Key, hash: Int, value: Value, slot: Int32) {
        if (count &+ 1) &* 4 > (mask &+ 1) &* 3 { grow() }
        var bucket = home(hash)
        while self.slot(at: bucket) != noSlot { bucket = (bucket &+ 1) & mask }
        let address = address(bucket)
        address.storeBytes(of: hash, as: Int.self)
        address.storeBytes(of: slot, toByteOffset: Self.slotOffset, as: Int32.self)
        (address + Self.keyOffset).initializeMemory(as: Key.self, to: key)
        (address + Self.valueOffset).initializeMemory(as: Value.self, to: value)
        count += 1
        if Int(slot) >= slotCapacity { growSlots(toHold: Int(slot)) }
        bucketOfSlot[Int(slot)] = Int32(truncatingIfNeeded: bucket)
    }

    /// Doubles the slot-to-bucket map until it has room for `slot`.
    @usableFromInline
    mutating func growSlots(toHold slot: Int) {
        var capacity = slotCapacity
        while capacity <= slot { capacity *= 2 }
        let grown = UnsafeMutablePointer<Int32>.allocate(capacity: capacity)
        grown.moveInitialize(from: bucketOfSlot, count: slotCapacity)
        (grown + slotCapacity).initialize(repeating: noSlot, count: capacity - slotCapacity)
        bucketOfSlot.deallocate()
        bucketOfSlot = grown
        slotCapacity = capacity
    }

    /// Removes the entry of `slot` and returns its key and value. The entries after it that
    /// probed past its bucket move back, so that no lookup needs a tombstone to go on.
    @inlinable
    mutating func remove(slot: Int32) -> (key: Key, value: Value) {
        var hole = Int(bucketOfSlot[Int(slot)])
        bucketOfSlot[Int(slot)] = noSlot
        let removed = (keyAddress(hole).move(), valueAddress(hole).move())
        var next = (hole &+ 1) & mask
        while true {
            let nextSlot = self.slot(at: next)
            if nextSlot == noSlot { break }
            // The entry may fill the hole if the hole lies between its home and where it is.
            if (next &- home(hash(at: next))) & mask >= (next &- hole) & mask {
                moveBucket(from: next, to: hole)
                bucketOfSlot[Int(nextSlot)] = Int32(truncatingIfNeeded: hole)
                hole = next
            }
            next = (next &+ 1) & mask
        }
        address(hole).storeBytes(of: noSlot, toByteOffset: Self.slotOffset, as: Int32.self)
        count -= 1
        return removed
    }

    /// Moves a full bucket's entry into an empty or vacated one; `from` is left as vacated
    /// (its key and value moved out).
    @inlinable
    func moveBucket(from source: Int, to target: Int) {
        let to = address(target)
        to.storeBytes(of: hash(at: source), as: Int.self)
        to.storeBytes(of: slot(at: source), toByteOffset: Self.slotOffset, as: Int32.self)
        (to + Self.keyOffset).initializeMemory(as: Key.self, to: keyAddress(source).move())
        (to + Self.valueOffset).initializeMemory(as: Value.self, to: valueAddress(source).move())
    }

    /// Doubles the buckets and moves every entry to its place in the new table.
    @usableFromInline
    mutating func grow() {
        let oldBase = base
        let oldMask = mask
        (base, bucketMask, homeShift) = Self.allocateBuckets((oldMask + 1) * 2)
        for source in 0...oldMask {
            let from = oldBase + source * Self.stride
            let slot = from.load(fromByteOffset: Self.slotOffset, as: Int32.self)
            guard slot != noSlot else { continue }
            let hash = from.load(as: Int.self)
            var bucket = home(hash)
            while self.slot(at: bucket) != noSlot { bucket = (bucket &+ 1) & mask }
            let to = address(bucket)
            to.storeBytes(of: hash, as: Int.self)
            to.storeBytes(of: slot, toByteOffset: Self.slotOffset, as: Int32.self)
            let key = (from + Self.keyOffset).assumingMemoryBound(to: Key.self).move()
            let value = (from + Self.valueOffset).assumingMemoryBound(to: Value.self).move()
            (to + Self.keyOffset).initializeMemory(as: Key.self, to: key)
            (to + Self.valueOffset).initializeMemory(as: Value.self, to: value)
            bucketOfSlot[Int(slot)] = Int32(truncatingIfNeeded: bucket)
        }
        oldBase.deallocate()
    }
}

// The shard's lock guards every access: lookups share it, writes hold it alone. Sharing the
// index shares its keys and values, hence the conditions.
extension ShardIndex: @unchecked Sendable where Key: Sendable, Value: Sendable {}
