#if Macros
import BatonMacros
import BatonTesting

/// The price tag as a `@Synchronized` class: both fields change in one `withLock`, and a read
/// takes both in another.
@Synchronized
final class SynchronizedPriceTag {
    private var cents = 0
    private var label = PriceLabel.format(0)

    func setPrice(_ new: Int) {
        withLock {
            cents = new
            label = PriceLabel.format(new)
        }
    }

    var current: PriceLabel { withLock { PriceLabel(cents: cents, label: label) } }
}

extension Zoo {
    static var synchronizedPriceTag: Exhibit {
        Exhibit(type: "SynchronizedPriceTag (@Synchronized)", bug: nil) { budget in
            try priceTagCheck({ SynchronizedPriceTag() }, set: { $0.setPrice($1) }, read: { $0.current })
                .run(budget: budget)
        }
    }
}
#endif
