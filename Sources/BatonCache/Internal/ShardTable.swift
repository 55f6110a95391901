/// A cache's shards, unretained, in memory it owns: the hot paths reach a shard without a
/// retain and a release.
///
/// A shard loaded from an array, or even borrowed through an address, is retained and released
/// around the operation whenever the optimiser cannot prove that nothing frees it meanwhile
/// (the lock's slow paths are calls it cannot see into): two atomic writes per operation to the
/// shard object's reference count, on a line that every thread using the shard shares.
/// ``withShard(_:_:)`` lends the shard through `_withUnsafeGuaranteedRef`, which promises the
/// optimiser that the shard outlives the call, so no copy is made. The owner keeps the shards
/// alive (its `shards` array) for as long as the table exists, and calls ``deallocate()`` in
/// its `deinit`.
@usableFromInline
struct ShardTable<Key: Hashable & Sendable, Value: Sendable> {
    @usableFromInline let base: UnsafeMutablePointer<Unmanaged<CacheShard<Key, Value>>>
    @usableFromInline let count: Int

    init(_ shards: [CacheShard<Key, Value>]) {
        count = shards.count
        base = .allocate(capacity: count)
        base.initialize(from: shards.map { Unmanaged.passUnretained($0) }, count: count)
    }

    /// Calls `body` with the shard at `index`, borrowed.
    @inlinable
    func withShard<Result>(_ index: Int, _ body: (CacheShard<Key, Value>) -> Result) -> Result {
        base[index]._withUnsafeGuaranteedRef(body)
    }

    func deallocate() {
        base.deinitialize(count: count)
        base.deallocate()
    }
}

// The table is written once, at init, before the cache is shared, and freed in its deinit;
// in between it is only read. The shards are Sendable.
extension ShardTable: @unchecked Sendable {}
