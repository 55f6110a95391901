import Atomics

/// One shard's statistics counters, on a cache line of their own so that threads working on
/// different shards never write the same line. ``MemoryCache/statistics`` sums them.
@usableFromInline
final class ShardCounters {
    @usableFromInline
    enum Counter: Int, CaseIterable {
        case hits, misses, insertions, evictions, expirations, removals
    }

    @usableFromInline let storage: UnsafeMutablePointer<UnsafeAtomic<Int>.Storage>

    /// A whole 64-byte line, so neighbouring allocations do not share it.
    @usableFromInline static var slots: Int { 8 }

    init() {
        let raw = UnsafeMutableRawPointer.allocate(
            byteCount: MemoryLayout<UnsafeAtomic<Int>.Storage>.stride * Self.slots, alignment: 64)
        storage = raw.bindMemory(to: UnsafeAtomic<Int>.Storage.self, capacity: Self.slots)
        storage.initialize(repeating: .init(0), count: Self.slots)
    }

    deinit {
        storage.deinitialize(count: Self.slots)
        UnsafeMutableRawPointer(storage).deallocate()
    }

    @inlinable
    func increment(_ counter: Counter, by amount: Int = 1) {
        // Statistics need no ordering with anything else; relaxed is the cheapest atomic add.
        UnsafeAtomic<Int>(at: storage + counter.rawValue).wrappingIncrement(by: amount, ordering: .relaxed)
    }

    @usableFromInline
    func load(_ counter: Counter) -> Int {
        UnsafeAtomic<Int>(at: storage + counter.rawValue).load(ordering: .relaxed)
    }
}
// The counters are only reached through atomic operations; `storage` never changes.
extension ShardCounters: @unchecked Sendable {}
