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
}
