/// A cache's shards in memory it owns, read in place.
///
/// A shard read through `subscript` is borrowed by the call it is passed to; one loaded from an
/// array is retained and released around the call, two atomic writes to the shard object per
/// operation on a line that every thread using the shard shares. The owner calls
/// ``deallocate()`` in its `deinit`.
@usableFromInline
struct ShardTable<Key: Hashable & Sendable, Value: Sendable> {
    @usableFromInline let base: UnsafeMutablePointer<CacheShard<Key, Value>>
    @usableFromInline let count: Int

    init(_ shards: [CacheShard<Key, Value>]) {
        count = shards.count
        base = .allocate(capacity: count)
        base.initialize(from: shards, count: count)
    }

    @inlinable
    subscript(index: Int) -> CacheShard<Key, Value> {
        unsafeAddress { UnsafePointer(base + index) }
    }

    func deallocate() {
        base.deinitialize(count: count)
        base.deallocate()
    }
}

// The table is written once, at init, before the cache is shared, and freed in its deinit;
// in between it is only read. The shards are Sendable.
extension ShardTable: @unchecked Sendable {}
