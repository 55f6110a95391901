/// The waiters of an async primitive, in arrival order, each under an ID its task chose before it
/// queued, so that its cancellation handler can take it out again.
///
/// A queue of IDs gives the order and a dictionary the entries: taking a waiter out in the middle
/// leaves its ID behind, which the front skips later. Every operation is amortised O(1). Not
/// thread-safe: it lives inside a primitive's state, under that primitive's lock.
struct WaiterQueue<Element> {
    /// IDs in arrival order from `head` on, including those of waiters already taken out.
    private var order: [UInt64] = []
    private var head = 0
    private var entries: [UInt64: Element] = [:]

    /// The waiters still queued.
    var count: Int { entries.count }

    /// IDs the queue holds, consumed or not (for tests: its memory follows its waiters).
    var storedIDs: Int { order.count }

    /// Queues a waiter at the back.
    mutating func append(_ element: Element, id: UInt64) {
        order.append(id)
        entries[id] = element
    }

    /// Takes the waiter that arrived first.
    mutating func popFirst() -> Element? {
        guard !entries.isEmpty else { return nil }
        while true {
            let id = order[head]
            advance()
            if let element = entries.removeValue(forKey: id) { return element }
        }
    }

    /// The waiter that arrived first and its ID, left queued; `nil` if none is.
    mutating func first() -> (element: Element, id: UInt64)? {
        guard !entries.isEmpty else { return nil }
        while entries[order[head]] == nil { advance() }
        let id = order[head]
        return (entries[id]!, id)
    }

    /// Whether the waiter with this ID is still queued.
    func contains(id: UInt64) -> Bool {
        entries[id] != nil
    }

    /// Takes the waiter with this ID out, wherever it is; `nil` if it is no longer queued.
    mutating func remove(id: UInt64) -> Element? {
        let element = entries.removeValue(forKey: id)
        if entries.isEmpty {
            order.removeAll(keepingCapacity: true)
            head = 0
        } else if order.count - head > 2 * entries.count + 64 {
            // Mostly IDs of waiters taken out (a storm of cancellations while no one is resumed):
            // dropping them keeps the queue's memory proportional to its waiters.
            order = order[head...].filter { entries[$0] != nil }
            head = 0
        }
        return element
    }

    private mutating func advance() {
        head += 1
        if head == order.count {
            order.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64 && head * 2 >= order.count {
            // Dropping the consumed prefix once it is half the array keeps the cost amortised O(1).
            order.removeFirst(head)
            head = 0
        }
    }
}
