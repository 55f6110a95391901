import BatonLocks
import BatonTesting

/// A price and the label shown for it, read together.
struct PriceLabel: Sendable, Hashable, CustomStringConvertible {
    var cents: Int
    var label: String

    /// The label a price should have.
    static func format(_ cents: Int) -> String {
        let fraction = cents % 100
        return "\(cents / 100).\(fraction < 10 ? "0" : "")\(fraction) €"
    }

    var description: String { "\(cents) \"\(label)\"" }
}

/// A price tag's sequential specification: `set` returns nothing; `read` the price and the
/// label formatted from that same price.
struct PriceTagModel: SequentialModel, Sendable {
    enum Operation: Sendable, Hashable {
        case set(Int)
        case read
    }

    var initialState: Int { 0 }

    func step(_ cents: Int, _ operation: Operation, _ output: PriceLabel?) -> Int? {
        switch operation {
        case .set(let new): output == nil ? new : nil
        case .read: output == PriceLabel(cents: cents, label: PriceLabel.format(cents)) ? cents : nil
        }
    }

    func describe(_ operation: Operation, _ output: PriceLabel?) -> String {
        output.map { "\(operation) → \($0)" } ?? "\(operation)"
    }
}

/// Stale read: the label is a derived value kept beside the price, and `setPrice` updates the
/// two in separate critical sections (formatting outside the lock, to keep the sections
/// short). A reader between the two sees the new price with the old price's label.
final class PriceTag: @unchecked Sendable {  // `lock` guards `cents` and `label`
    private let lock = Lock()
    private var cents = 0
    private var label = PriceLabel.format(0)

    func setPrice(_ new: Int) {
        lock.withLock { cents = new }
        let formatted = PriceLabel.format(new)
        lock.withLock { label = formatted }
    }

    var current: PriceLabel { lock.withLock { PriceLabel(cents: cents, label: label) } }
}

extension Zoo {
    static func priceTagCheck<Tag: Sendable>(
        _ make: @escaping () -> Tag, set: @escaping @Sendable (Tag, Int) -> Void,
        read: @escaping @Sendable (Tag) -> PriceLabel
    ) -> LinearizabilityCheck<Tag, PriceTagModel.Operation, PriceLabel?> {
        LinearizabilityCheck(
            model: PriceTagModel(), operations: [.set(250), .set(1999), .read], make: make
        ) { tag, operation in
            switch operation {
            case .set(let cents):
                set(tag, cents)
                return nil
            case .read:
                return read(tag)
            }
        }
    }

    static var priceTag: Exhibit {
        Exhibit(type: "PriceTag", bug: "stale read (derived value)") { budget in
            try priceTagCheck({ PriceTag() }, set: { $0.setPrice($1) }, read: { $0.current }).run(budget: budget)
        }
    }
}
