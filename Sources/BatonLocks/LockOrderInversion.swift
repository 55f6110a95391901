/// Two or more locks taken in orders that form a cycle: the pattern that deadlocks when the
/// threads involved run at the same time.
///
/// The classic case is AB/BA: one thread takes `a` then `b`, another takes `b` then `a`. Each
/// order on its own is fine; run together, each thread can end up holding the lock the other
/// waits for. The lock-order checker reports the first acquisition that closes such a cycle,
/// before it blocks, so the report comes whether or not the threads ever collide.
public struct LockOrderInversion: Sendable, Hashable, CustomStringConvertible {
    /// The acquisition that closed the cycle: ``LockOrder/second`` was being taken while
    /// ``LockOrder/first`` was held.
    public let newOrder: LockOrder
    /// The orders seen before that, which together with ``newOrder`` form the cycle: for AB/BA,
    /// the one order "`a` then `b`". Each leads to the next, and the last leads to the lock
    /// that ``newOrder`` holds.
    public let earlierOrders: [LockOrder]

    /// Creates a report.
    public init(newOrder: LockOrder, earlierOrders: [LockOrder]) {
        self.newOrder = newOrder
        self.earlierOrders = earlierOrders
    }

    /// The locks on the cycle, each once, in the order of ``earlierOrders``.
    public var locks: [LockDescription] {
        [newOrder.second] + earlierOrders.dropLast().map(\.second) + [newOrder.first]
    }

    /// A multi-line report naming the locks, both orders and where each lock was taken.
    public var description: String {
        var lines = [
            "Baton lock-order inversion: \(newOrder.second.kindAndName) is being taken while "
                + "\(newOrder.first.kindAndName) is held, but earlier the opposite order was seen. "
                + "Threads taking these locks at the same time can deadlock.",
            "  locks:",
        ]
        lines += locks.map { "    \($0)" }
        lines.append("  this order:")
        lines.append("    \(newOrder)")
        lines.append(earlierOrders.count == 1 ? "  earlier order:" : "  earlier orders (a chain):")
        lines += earlierOrders.map { "    \($0)" }
        lines.append("  Take these locks in one global order everywhere.")
        return lines.joined(separator: "\n")
    }
}

/// One lock taken while another was held, as the lock-order checker saw it.
public struct LockOrder: Sendable, Hashable, CustomStringConvertible {
    /// The lock that was held.
    public let first: LockDescription
    /// The lock taken while ``first`` was held.
    public let second: LockDescription
    /// Where ``first`` was taken.
    public let firstTakenAt: SourceSite
    /// Where ``second`` was taken.
    public let secondTakenAt: SourceSite
    /// The thread that did it, as a number that identifies it while it lives.
    public let thread: UInt

    /// Creates an order.
    public init(
        first: LockDescription, second: LockDescription, firstTakenAt: SourceSite,
        secondTakenAt: SourceSite, thread: UInt
    ) {
        self.first = first
        self.second = second
        self.firstTakenAt = firstTakenAt
        self.secondTakenAt = secondTakenAt
        self.thread = thread
    }

    /// `"a" then "b": "a" taken at X.swift:3, "b" taken at X.swift:4, on thread 0x…`.
    public var description: String {
        "\(first.kindAndName) then \(second.kindAndName): \(first.kindAndName) taken at "
            + "\(firstTakenAt), \(second.kindAndName) taken at \(secondTakenAt), on thread "
            + "0x\(String(thread, radix: 16))"
    }
}

extension LockDescription {
    /// `Lock "accounts"`, or `Lock created at App/Bank.swift:12` for an unnamed lock.
    var kindAndName: String {
        name.map { "\(kind.rawValue) \"\($0)\"" } ?? "\(kind.rawValue) created at \(createdAt)"
    }
}
