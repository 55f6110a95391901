import BatonLocks
import BatonTesting

/// An account's sequential specification: `deposit` returns nothing, `balance` the balance.
struct AccountModel: SequentialModel, Sendable {
    enum Operation: Sendable, Hashable {
        case deposit(Int)
        case balance
    }

    var initialState: Int { 0 }

    func step(_ balance: Int, _ operation: Operation, _ output: Int?) -> Int? {
        switch operation {
        case .deposit(let amount): output == nil ? balance + amount : nil
        case .balance: output == balance ? balance : nil
        }
    }

    func describe(_ operation: Operation, _ output: Int?) -> String {
        output.map { "\(operation) → \($0)" } ?? "\(operation)"
    }
}

/// Lost update: `deposit` reads the balance through the locked getter, then writes the sum in
/// a second critical section; a deposit between the two is overwritten.
final class ReadThenWriteAccount: @unchecked Sendable {  // `lock` guards `stored`
    private let lock = Lock()
    private var stored = 0

    var balance: Int { lock.withLock { stored } }

    func deposit(_ amount: Int) {
        let current = balance
        lock.withLock { stored = current + amount }
    }
}

/// The same account with its balance in `Protected`: a deposit is one `write`.
final class ProtectedAccount: Sendable {
    private let stored = Protected(0)

    var balance: Int { stored.value }

    func deposit(_ amount: Int) {
        stored.write { $0 += amount }
    }
}

extension Zoo {
    static func accountCheck<Account: Sendable>(
        _ make: @escaping () -> Account, deposit: @escaping @Sendable (Account, Int) -> Void,
        balance: @escaping @Sendable (Account) -> Int
    ) -> LinearizabilityCheck<Account, AccountModel.Operation, Int?> {
        LinearizabilityCheck(
            model: AccountModel(), operations: [.deposit(10), .deposit(25), .balance], make: make
        ) { account, operation in
            switch operation {
            case .deposit(let amount):
                deposit(account, amount)
                return nil
            case .balance:
                return balance(account)
            }
        }
    }

    static var readThenWriteAccount: Exhibit {
        Exhibit(type: "ReadThenWriteAccount", bug: "lost update") { budget in
            try accountCheck({ ReadThenWriteAccount() }, deposit: { $0.deposit($1) }, balance: { $0.balance })
                .run(budget: budget)
        }
    }

    static var protectedAccount: Exhibit {
        Exhibit(type: "ProtectedAccount (Protected)", bug: nil) { budget in
            try accountCheck({ ProtectedAccount() }, deposit: { $0.deposit($1) }, balance: { $0.balance })
                .run(budget: budget)
        }
    }
}
