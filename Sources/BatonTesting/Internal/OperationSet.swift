/// A set of operation indices as a bitset: the "which operations are linearized" half of the
/// search's memo key, so it must hash and compare fast.
struct OperationSet: Hashable {
    private var words: [UInt64]
    private(set) var count = 0

    init(capacity: Int) {
        words = Array(repeating: 0, count: (capacity + 63) / 64)
    }

    mutating func insert(_ index: Int) {
        let bit: UInt64 = 1 << UInt64(index & 63)
        if words[index >> 6] & bit == 0 {
            words[index >> 6] |= bit
            count += 1
        }
    }

    mutating func remove(_ index: Int) {
        let bit: UInt64 = 1 << UInt64(index & 63)
        if words[index >> 6] & bit != 0 {
            words[index >> 6] &= ~bit
            count -= 1
        }
    }

    static func == (lhs: OperationSet, rhs: OperationSet) -> Bool {
        lhs.words == rhs.words
    }

    func hash(into hasher: inout Hasher) {
        for word in words { hasher.combine(word) }
    }
}
