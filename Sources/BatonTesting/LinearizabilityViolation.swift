/// Why a history is not linearizable, told at the deepest point the checker reached: the
/// longest prefix of operations it could put in an order, the state after them, and the
/// operation that had to take effect next but could not, with the operations that overlapped it
/// (every one of them was tried there and failed, or led back to a configuration already
/// explored).
///
/// Operations that started after the blocked one returned play no part: they are left out.
///
/// Thread safety: a plain value; `Sendable`.
public struct LinearizabilityViolation: Sendable, Hashable, CustomStringConvertible {
    /// The partition's key, as `String(describing:)` writes it; nil when the history was
    /// checked whole.
    public var partition: String?
    /// How many operations the partition holds.
    public var operationCount: Int
    /// How many operations the longest consistent order reached.
    public var linearizedCount: Int
    /// The last few operations of that order, oldest first.
    public var linearizedTail: [String]
    /// The model's state after that order.
    public var state: String
    /// The operation that had returned but could not take effect in that state.
    public var blockedOperation: String
    /// The other operations that could have gone next there, none of them consistent.
    public var overlappingOperations: [String]

    /// Creates a violation report.
    public init(
        partition: String?, operationCount: Int, linearizedCount: Int, linearizedTail: [String], state: String,
        blockedOperation: String, overlappingOperations: [String]
    ) {
        self.partition = partition
        self.operationCount = operationCount
        self.linearizedCount = linearizedCount
        self.linearizedTail = linearizedTail
        self.state = state
        self.blockedOperation = blockedOperation
        self.overlappingOperations = overlappingOperations
    }

    /// A few lines: the partition, the blocked operation, the state, what overlapped it, and
    /// the end of the longest consistent order.
    public var description: String {
        var lines = [
            "not linearizable" + (partition.map { " (partition \($0))" } ?? "")
                + ": after \(linearizedCount) of \(operationCount) operations, in state \(state),",
            "  \(blockedOperation) cannot take effect,",
        ]
        if overlappingOperations.isEmpty {
            lines.append("  and no other operation overlaps it")
        } else {
            lines.append("  nor can any operation that overlaps it:")
            lines += overlappingOperations.map { "    \($0)" }
        }
        if !linearizedTail.isEmpty {
            lines.append("  the consistent order so far ends with:")
            lines += linearizedTail.map { "    \($0)" }
        }
        return lines.joined(separator: "\n")
    }
}
