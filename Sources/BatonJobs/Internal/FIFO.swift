/// A first-in, first-out queue: a ring buffer on one array, doubled when full. O(1) amortised
/// push and pop, no node allocation per element, and a pop moves its element out without
/// touching any other slot (emptying an array instead would have the runtime destroy every
/// slot, one by one).
struct FIFO<Element: AnyObject> {
    /// A power of two in size (or empty); the elements are at `head`, `head + 1`, … modulo the
    /// size, and the other slots are nil.
    private var slots: [Element?] = []
    private var head = 0
    private var count = 0

    var isEmpty: Bool { count == 0 }

    mutating func append(_ element: consuming Element) {
        if count == slots.count { grow() }
        slots[(head + count) & (slots.count - 1)] = element
        count += 1
    }

    mutating func popFirst() -> Element? {
        guard count > 0 else { return nil }
        let element = slots[head].take()
        head = (head + 1) & (slots.count - 1)
        count -= 1
        return element
    }

    private mutating func grow() {
        var larger = [Element?](repeating: nil, count: Swift.max(16, slots.count * 2))
        for index in 0..<count { larger[index] = slots[(head + index) & (slots.count - 1)].take() }
        slots = larger
        head = 0
    }
}
