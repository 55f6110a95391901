import Testing

@testable import BatonLocks

@Suite("WaiterQueue")
struct WaiterQueueTests {
    @Test("Waiters come out in arrival order, whatever their IDs; one taken out in the middle is skipped")
    func arrivalOrderAndRemoval() {
        var queue = WaiterQueue<String>()
        queue.append("a", id: 7)
        queue.append("b", id: 3)
        queue.append("c", id: 9)
        #expect(queue.remove(id: 3) == "b")
        #expect(queue.remove(id: 3) == nil)
        #expect(queue.remove(id: 42) == nil)
        #expect(queue.count == 2)
        #expect(queue.popFirst() == "a")
        #expect(queue.popFirst() == "c")
        #expect(queue.popFirst() == nil)
        #expect(queue.count == 0)
    }

    @Test("Thousands of removals while a few stay queued keep the survivors, in order")
    func survivesAStormOfRemovals() {
        var queue = WaiterQueue<Int>()
        for id in 0..<5_000 { queue.append(Int(id), id: UInt64(id)) }
        for id in 0..<5_000 where id % 100 != 0 { #expect(queue.remove(id: UInt64(id)) == id) }
        // Interleave more arrivals and removals at the back.
        for id in 5_000..<6_000 {
            queue.append(id, id: UInt64(id))
            if id % 2 == 1 { _ = queue.remove(id: UInt64(id)) }
        }
        var drained: [Int] = []
        while let next = queue.popFirst() { drained.append(next) }
        let expected = Array(stride(from: 0, to: 5_000, by: 100)) + Array(stride(from: 5_000, to: 6_000, by: 2))
        #expect(drained == expected)
    }

    @Test(
        "The IDs a queue holds follow its waiters: none once emptied, by pops or by removals, and a bounded number in a storm"
    )
    func storedIDsFollowTheWaiters() {
        var queue = WaiterQueue<Int>()
        for id in 0..<10 { queue.append(id, id: UInt64(id)) }
        for _ in 0..<10 { _ = queue.popFirst() }
        #expect(queue.storedIDs == 0, "emptied by pops")
        for id in 10..<20 { queue.append(id, id: UInt64(id)) }
        for id in 10..<20 { _ = queue.remove(id: UInt64(id)) }
        #expect(queue.storedIDs == 0, "emptied by removals")
        for id in 0..<5_000 { queue.append(id, id: UInt64(id)) }
        for id in 0..<5_000 where id % 500 != 0 { _ = queue.remove(id: UInt64(id)) }
        #expect(queue.count == 10)
        #expect(queue.storedIDs <= 2 * 10 + 64, "a storm of removals leaves \(queue.storedIDs) IDs")
    }

    /// A compaction once the front has moved on (waiters were popped, fewer than the 64 after
    /// which the consumed prefix is dropped anyway): the survivors stay, in order, and the front
    /// starts at the first of them.
    @Test("A compaction after waiters were popped keeps the rest in order, the first at the front")
    func compactionAfterPops() {
        var queue = WaiterQueue<Int>()
        for id in 0..<1_000 { queue.append(id, id: UInt64(id)) }
        for expected in 0..<10 { #expect(queue.popFirst() == expected) }
        // Removing two in three compacts the queue once, with 462 waiters left.
        for id in 10..<1_000 where id % 3 != 0 { #expect(queue.remove(id: UInt64(id)) == id) }
        #expect(queue.count == 330)
        let front = (0..<5).map { _ in queue.popFirst() }
        #expect(front == [12, 15, 18, 21, 24])
        // A queue whose front is past waiters it still holds would trap when drained.
        guard front == [12, 15, 18, 21, 24] else { return }
        var drained: [Int] = []
        while let next = queue.popFirst() { drained.append(next) }
        #expect(drained == Array(stride(from: 27, to: 1_000, by: 3)))
    }
}
