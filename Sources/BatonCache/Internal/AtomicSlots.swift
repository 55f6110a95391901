import Atomics

/// A fixed-size array of atomics, one per slot of a shard: the per-entry state that lookups
/// update while they hold only the shard's shared (read) lock — SIEVE's visited bit and the
/// time of the last read for `timeToIdle`.
///
/// A plain pointer and a count, so that reading it out of the shard's state costs no
/// reference counting (a class here would be retained and released by every reader, on a
/// cache line they all share). The shard owns the memory: ``grown(to:initial:)`` frees the old
/// buffer, and the shard's `deinit` frees the last one.
///
/// Relaxed ordering is enough for both uses: they are hints read back by the thread that holds
/// the shard's exclusive lock, which the lock's own acquire/release orders after every reader.
@usableFromInline
struct AtomicSlots<Element: AtomicValue> where Element.AtomicRepresentation.Value == Element {
    @usableFromInline let base: UnsafeMutablePointer<UnsafeAtomic<Element>.Storage>
    @usableFromInline let capacity: Int

    /// `capacity` slots holding `initial`, the first at an address that is a multiple of
    /// `alignment` (a power of two; the element's own alignment by default).
    @usableFromInline
    init(capacity: Int, initial: Element, alignment: Int = MemoryLayout<UnsafeAtomic<Element>.Storage>.alignment) {
        self.capacity = capacity
        base = UnsafeMutableRawPointer.allocate(
            byteCount: MemoryLayout<UnsafeAtomic<Element>.Storage>.stride * capacity,
            alignment: max(alignment, MemoryLayout<UnsafeAtomic<Element>.Storage>.alignment)
        ).bindMemory(to: UnsafeAtomic<Element>.Storage.self, capacity: capacity)
        for index in 0..<capacity {
            (base + index).initialize(to: UnsafeAtomic<Element>.Storage(initial))
        }
    }

    @inlinable
    func load(_ index: Int) -> Element {
        UnsafeAtomic<Element>(at: base + index).load(ordering: .relaxed)
    }

    @inlinable
    func store(_ value: Element, at index: Int) {
        UnsafeAtomic<Element>(at: base + index).store(value, ordering: .relaxed)
    }

    /// A copy with room for `newCapacity` slots; frees this one. Called with the shard's
    /// exclusive lock held, so no reader uses `self` meanwhile.
    @usableFromInline
    func grown(to newCapacity: Int, initial: Element) -> AtomicSlots {
        let copy = AtomicSlots(capacity: newCapacity, initial: initial)
        for index in 0..<capacity {
            copy.store(load(index), at: index)
        }
        deallocate()
        return copy
    }

    /// Frees the memory. Called once, by its owner.
    @usableFromInline
    func deallocate() {
        base.deinitialize(count: capacity)
        UnsafeMutableRawPointer(base).deallocate()
    }
}

extension AtomicSlots where Element == Int64 {
    /// Stores `value` at `index` unless a later value is there already. A reader reads the
    /// clock before it takes the shard's lock, so its time may be older than a write that got
    /// the lock first, or than another reader's: stamping it as is would move an entry's last
    /// read back and expire it early, even just after it was written.
    @inlinable
    func raise(to value: Int64, at index: Int) {
        let atomic = UnsafeAtomic<Int64>(at: base + index)
        var current = atomic.load(ordering: .relaxed)
        while value > current {
            let (exchanged, original) = atomic.weakCompareExchange(
                expected: current, desired: value, ordering: .relaxed)
            if exchanged { return }
            current = original
        }
    }
}

// Only atomic operations reach the memory; the shard's lock orders its growth and release.
extension AtomicSlots: @unchecked Sendable {}
