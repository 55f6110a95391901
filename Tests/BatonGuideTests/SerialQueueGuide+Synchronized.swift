// The "After: @Synchronized" code of Baton.docc/MigratingFromSerialQueues.md, verbatim. It
// needs the Macros trait, like the BatonMacros product.
#if Macros
import BatonMacros

@Synchronized
final class Ledger {
    private(set) var balance = 0
    private(set) var history: [Int] = []

    func deposit(_ amount: Int) {
        withLock {
            balance += amount
            history.append(amount)
        }
    }

    func withdraw(_ amount: Int) -> Bool {  // check and update in one section
        withLock {
            guard balance >= amount else { return false }
            balance -= amount
            history.append(-amount)
            return true
        }
    }
}
#endif
