import BatonLocks
import BatonTesting

/// A wallet's sequential specification: `withdraw` returns the balance left, or nil if the
/// balance is too low (and changes nothing); `deposit` and `balance` return the balance.
struct WalletModel: SequentialModel, Sendable {
    enum Operation: Sendable, Hashable {
        case withdraw(Int)
        case deposit(Int)
        case balance
    }

    var initialState: Int { 100 }

    func step(_ balance: Int, _ operation: Operation, _ output: Int?) -> Int? {
        let next: Int? =
            switch operation {
            case .withdraw(let amount): balance >= amount ? balance - amount : nil
            case .deposit(let amount): balance + amount
            case .balance: balance
            }
        guard let next else { return output == nil ? balance : nil }
        return output == next ? next : nil
    }

    func describe(_ operation: Operation, _ output: Int?) -> String {
        "\(operation) → \(output.map(String.init) ?? "refused")"
    }
}

/// Where withdrawals are recorded before they take effect.
actor AuditLog {
    private var entries: [Int] = []

    func record(withdrawal amount: Int) async {
        await Task.yield()  // stands for the write to the audit store
        entries.append(amount)
    }
}

/// Actor re-entrancy: `withdraw` checks the balance, awaits the audit log, then subtracts. While
/// it waits the actor runs other calls, and two withdrawals that both passed the check overdraw.
actor Wallet {
    private var stored = 100
    private let audit = AuditLog()

    func withdraw(_ amount: Int) async -> Int? {
        guard stored >= amount else { return nil }
        await audit.record(withdrawal: amount)
        stored -= amount
        return stored
    }

    func deposit(_ amount: Int) -> Int {
        stored += amount
        return stored
    }

    var balance: Int { stored }
}

/// The same wallet with its withdrawals serialized by an `AsyncLock` across the `await`.
actor LockedWallet {
    private var stored = 100
    private let audit = AuditLog()
    private let withdrawing = AsyncLock()

    /// - Throws: Only `CancellationError` or a re-entry error, which the check never causes.
    func withdraw(_ amount: Int) async throws -> Int? {
        try await withdrawing.withLock {
            guard stored >= amount else { return nil }
            await audit.record(withdrawal: amount)
            stored -= amount
            return stored
        }
    }

    func deposit(_ amount: Int) -> Int {
        stored += amount
        return stored
    }

    var balance: Int { stored }
}

@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
extension Zoo {
    static var walletOperations: CheckOperations<WalletModel.Operation> {
        [
            .withdraw(60), .withdraw(30), .deposit(20), .balance,
        ]
    }

    static var wallet: Exhibit {
        Exhibit(type: "Wallet (actor)", bug: "actor re-entrancy") { budget in
            try await AsyncLinearizabilityCheck(model: WalletModel(), operations: walletOperations, make: { Wallet() })
            {
                wallet, operation in
                switch operation {
                case .withdraw(let amount): await wallet.withdraw(amount)
                case .deposit(let amount): await wallet.deposit(amount)
                case .balance: await wallet.balance
                }
            }.run(budget: budget)
        }
    }

    static var lockedWallet: Exhibit {
        Exhibit(type: "LockedWallet (actor, AsyncLock)", bug: nil) { budget in
            try await AsyncLinearizabilityCheck(
                model: WalletModel(), operations: walletOperations, make: { LockedWallet() }
            ) { wallet, operation in
                switch operation {
                case .withdraw(let amount): try! await wallet.withdraw(amount)
                case .deposit(let amount): await wallet.deposit(amount)
                case .balance: await wallet.balance
                }
            }.run(budget: budget)
        }
    }
}
