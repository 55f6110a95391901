import Atomics

/// A cache's statistics counters, striped by thread: each thread adds to the stripe of its
/// ``ThreadStripe`` number, a 64-byte line of its own, and ``MemoryCache/statistics`` sums the
/// stripes.
///
/// Counters per shard put every thread that hits a popular key on one line: on a skewed key
/// stream the hottest shard's counters passed from core to core on most lookups. A plain
/// pointer, not a class, so that reaching the counters costs no reference counting either.
@usableFromInline
struct CacheCounters {
    @usableFromInline
    enum Counter: Int, CaseIterable {
        case hits, misses, insertions, evictions, expirations, removals
        /// The evictions for the cost limit, counted in `evictions` too.
        case costEvictions
    }

    @usableFromInline let storage: UnsafeMutablePointer<UnsafeAtomic<Int>.Storage>
    /// Stripes minus one: a power of two minus one.
    @usableFromInline let stripeMask: Int

    /// Counters per stripe: a whole 64-byte line, so that no two stripes share one.
    @usableFromInline static var stride: Int { 8 }

    init(stripes: Int) {
        precondition(stripes > 0 && stripes & (stripes - 1) == 0, "stripes must be a power of two")
        stripeMask = stripes - 1
        let slots = stripes * Self.stride
        let raw = UnsafeMutableRawPointer.allocate(
            byteCount: MemoryLayout<UnsafeAtomic<Int>.Storage>.stride * slots, alignment: 64)
        storage = raw.bindMemory(to: UnsafeAtomic<Int>.Storage.self, capacity: slots)
        storage.initialize(repeating: .init(0), count: slots)
    }

    /// Frees the memory. Called once, by the cache's `deinit`.
    func deallocate() {
        storage.deinitialize(count: (stripeMask + 1) * Self.stride)
        UnsafeMutableRawPointer(storage).deallocate()
    }

    // Always inlined: as a call it cost a lookup about 30 instructions, a tenth of the whole.
    // (Inlined while the lookup itself was left to the optimiser, it tipped it into outlining
    // the shard's read lock, which then retained the lock object on every read; the lookup's
    // path is now inlined whole, see `MemoryCache.countedLookup`.)
    @inlinable @inline(__always)
    func increment(_ counter: Counter, by amount: Int) {
        // Wrapping arithmetic: the stripe is masked and the counter a small raw value, so
        // neither can overflow, and the checks cost instructions on every count.
        let slot = (ThreadStripe.current & stripeMask) &* Self.stride &+ counter.rawValue
        // Statistics need no ordering with anything else; relaxed is the cheapest atomic add.
        UnsafeAtomic<Int>(at: storage + slot).wrappingIncrement(by: amount, ordering: .relaxed)
    }

    /// Adds one to `counter`.
    @inlinable
    func increment(_ counter: Counter) {
        increment(counter, by: 1)
    }

    /// The sum over the stripes. Each stripe is read atomically; a total read while other
    /// threads count is a moment's snapshot of each stripe, as per-shard totals were.
    func load(_ counter: Counter) -> Int {
        var total = 0
        for stripe in 0...stripeMask {
            total &+= UnsafeAtomic<Int>(at: storage + stripe * Self.stride + counter.rawValue).load(ordering: .relaxed)
        }
        return total
    }
}

// Only atomic operations reach the memory; `storage` never changes until the owner frees it.
extension CacheCounters: @unchecked Sendable {}
