import BatonTestSupport
import Testing

@testable import BatonCache

/// A key whose hash the test chooses: `bucket` is all that is hashed, so keys that share it
/// collide on the full hash and only `==` tells them apart.
struct CollidingKey: Hashable, Sendable {
    let id: Int
    let bucket: Int

    func hash(into hasher: inout Hasher) { hasher.combine(bucket) }
}

/// A shard's open-addressing index, checked against a `Dictionary` model: every lookup agrees,
/// the table's structure holds after every step (each entry reachable from its home, the
/// reverse map exact), and every key and value it held is released exactly once.
@Suite(.timeLimit(.minutes(1)))
struct ShardIndexTests {
    /// Random inserts, replacements and removals, with few distinct hashes (`hashes`) so that
    /// probe runs are long, collide on the full hash and wrap around the end of the table.
    @Test(
        "agrees with a Dictionary through growth, removal and full-hash collisions",
        arguments: [(seed: 1, hashes: 1_000_000), (seed: 2, hashes: 7), (seed: 3, hashes: 1)])
    func agreesWithADictionary(seed: UInt64, hashes: Int) {
        var random = Xorshift(seed: seed)
        var index = ShardIndex<CollidingKey, Int>()
        defer { index.deallocate() }
        var model: [CollidingKey: (value: Int, slot: Int32)] = [:]
        var freeSlots: [Int32] = []
        var nextSlot: Int32 = 0
        let keySpace = hashes == 1 ? 60 : 600
        for step in 0..<6_000 {
            let id = Int(random.next() % UInt64(keySpace))
            let key = CollidingKey(id: id, bucket: id % hashes)
            let bucket = index.find(key, hash: key.hashValue)
            #expect((bucket >= 0) == (model[key] != nil), "step \(step): find(\(id)) disagrees")
            let removes = random.next() % 3 == 0
            if bucket < 0 {
                let slot = freeSlots.popLast() ?? nextSlot
                if slot == nextSlot { nextSlot += 1 }
                index.insert(key, hash: key.hashValue, value: step, slot: slot)
                model[key] = (step, slot)
            } else if removes {
                let slot = index.slot(at: bucket)
                let removed = index.remove(slot: slot)
                #expect(removed.key == key && removed.value == model[key]?.value)
                model[key] = nil
                freeSlots.append(slot)
            } else {
                #expect(index.value(at: bucket) == model[key]?.value)
                #expect(index.slot(at: bucket) == model[key]?.slot)
                #expect(index.replaceValue(at: bucket, with: step) == model[key]?.value)
                model[key]?.value = step
            }
            if step % 97 == 0 {
                #expect(index.invariantViolations() == [], "step \(step)")
            }
        }
        #expect(index.count == model.count)
        #expect(index.invariantViolations() == [])
        for (key, entry) in model {
            let bucket = index.find(key, hash: key.hashValue)
            #expect(bucket >= 0 && index.value(at: bucket) == entry.value && index.slot(at: bucket) == entry.slot)
            #expect(index.key(ofSlot: entry.slot) == key && index.hash(ofSlot: entry.slot) == key.hashValue)
        }
        var visited = 0
        index.forEach { key, value, slot in
            visited += 1
            #expect(model[key]?.value == value && model[key]?.slot == slot)
        }
        #expect(visited == model.count)
    }

    /// A bucket is the stored hash, the slot, the key and the value, each at the next offset its
    /// alignment allows: no padding beyond that, so as many buckets as can share a cache line do.
    @Test("a bucket holds the hash, the slot, the key and the value with no padding beyond their alignment")
    func bucketsArePacked() {
        #expect(ShardIndex<Int, Int>.roundedUp(16, 8) == 16)
        #expect(ShardIndex<Int, Int>.roundedUp(12, 8) == 16)
        #expect(ShardIndex<Int, Int>.roundedUp(13, 1) == 13)
        // hash 0..<8, slot 8..<12, key 16..<24, value 24..<32.
        #expect(ShardIndex<Int, Int>.keyOffset == 16)
        #expect(ShardIndex<Int, Int>.valueOffset == 24)
        #expect(ShardIndex<Int, Int>.stride == 32)
        // hash 0..<8, slot 8..<12, key 12, value 13, then up to the hash's alignment.
        #expect(ShardIndex<UInt8, UInt8>.keyOffset == 12)
        #expect(ShardIndex<UInt8, UInt8>.valueOffset == 13)
        #expect(ShardIndex<UInt8, UInt8>.stride == 16)
    }

    /// A table allowed to fill would make the probe for an absent key go round it for ever; the
    /// load is checked after each insert, which itself never probes for the key, so a table
    /// that grows too late fails here by name instead of hanging a later lookup.
    @Test("the table grows before three quarters of its buckets are full")
    func growsBeforeThreeQuartersFull() {
        var index = ShardIndex<CollidingKey, Int>()
        defer { index.deallocate() }
        var problems: [String] = []
        for id in 0..<1_000 where problems.isEmpty {
            let key = CollidingKey(id: id, bucket: id)
            index.insert(key, hash: key.hashValue, value: id, slot: Int32(id))
            problems = index.invariantViolations().map { "after \(id + 1) inserts: \($0)" }
        }
        #expect(problems == [])
        #expect(index.count == 1_000)
    }

    @Test("the table fills to exactly three quarters, and grows at the insert that would pass it")
    func growsAtTheInsertThatPassesThreeQuarters() {
        var index = ShardIndex<Int, Int>()
        defer { index.deallocate() }
        #expect(index.mask + 1 == ShardIndex<Int, Int>.minimumBuckets)
        for key in 0..<6 { index.insert(key, hash: key.hashValue, value: key, slot: Int32(key)) }
        #expect(index.mask + 1 == 8, "six entries in eight buckets is three quarters, not past it")
        index.insert(6, hash: 6.hashValue, value: 6, slot: 6)
        #expect(index.mask + 1 == 16)
    }

    @Test("a slot past the end of the slot map holds no entry")
    func aSlotPastTheMapIsEmpty() {
        var index = ShardIndex<Int, Int>()
        defer { index.deallocate() }
        index.insert(1, hash: 1.hashValue, value: 1, slot: 0)
        #expect(index.hasEntry(inSlot: 0))
        #expect(!index.hasEntry(inSlot: 1))
        #expect(!index.hasEntry(inSlot: Int32(index.slotCapacity)))
    }

    @Test("an absent key is a miss, in an empty table and in a full run of colliding hashes")
    func absentKeysMiss() {
        var index = ShardIndex<CollidingKey, Int>()
        defer { index.deallocate() }
        #expect(index.find(CollidingKey(id: 0, bucket: 0), hash: 0) == -1)
        for id in 0..<100 {
            let key = CollidingKey(id: id, bucket: 0)
            index.insert(key, hash: key.hashValue, value: id, slot: Int32(id))
        }
        let stranger = CollidingKey(id: 100, bucket: 0)
        #expect(index.find(stranger, hash: stranger.hashValue) == -1)
        #expect(index.invariantViolations() == [])
    }

    @Test("every key and value is released once: removed, replaced, moved by growth, or freed with the table")
    func releasesEveryKeyAndValueOnce() {
        let keys = Census()
        let values = Census()
        let probes = Census()
        var index = ShardIndex<TrackedKey, Tracked>()
        for id in 0..<1_000 {
            let key = TrackedKey(keys, id)
            index.insert(key, hash: key.hashValue, value: Tracked(values), slot: Int32(id))
        }
        #expect(keys.released == 0 && values.released == 0, "growth released what it moved")
        for slot in stride(from: 0, to: 1_000, by: 2) {
            _ = index.remove(slot: Int32(slot))
        }
        #expect(keys.released == 500 && values.released == 500)
        for id in stride(from: 5, to: 1_000, by: 10) {
            let probe = TrackedKey(probes, id)
            let bucket = index.find(probe, hash: probe.hashValue)
            #expect(bucket >= 0)
            if bucket >= 0 { _ = index.replaceValue(at: bucket, with: Tracked(values)) }
        }
        #expect(keys.released == 500 && values.released == 600)
        #expect(index.invariantViolations() == [])
        index.deallocate()
        #expect(keys.released == 1_000)
        #expect(values.released == 1_100)
    }

    @Test("a cache whose keys all share one hash keeps every entry readable and its limits exact")
    func cacheOfCollidingKeys() {
        let cache = MemoryCache<CollidingKey, Int>(countLimit: 150, shardCount: 4)
        for id in 0..<300 {
            cache[CollidingKey(id: id, bucket: 0)] = id
            if id % 3 == 0 { cache[CollidingKey(id: id / 2, bucket: 0)] = nil }
        }
        #expect(cache.count <= 150)
        #expect(cache.invariantViolations() == [])
        var readable = 0
        for id in 0..<300 {
            if let value = cache.peek(CollidingKey(id: id, bucket: 0)) {
                #expect(value == id)
                readable += 1
            }
        }
        #expect(readable == cache.count)
        #expect(cache.statistics.evictions + cache.statistics.removals + readable == 300)
        cache.removeAll()
        #expect(cache.count == 0 && cache.invariantViolations() == [])
    }
}
