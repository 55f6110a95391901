import Baton
import BatonTestSupport
import Testing

// The "After: Protected" code of Baton.docc/MigratingFromSerialQueues.md, verbatim.

final class Account: Sendable {
    private struct State {
        var balance = 0
        var history: [Int] = []
    }
    private let state = Protected(State())

    var balance: Int { state.read { $0.balance } }
    var history: [Int] { state.read { $0.history } }

    func deposit(_ amount: Int) {
        state.write { state in
            state.balance += amount
            state.history.append(amount)
        }
    }

    func withdraw(_ amount: Int) -> Bool {  // check and update in one section
        state.write { state in
            guard state.balance >= amount else { return false }
            state.balance -= amount
            state.history.append(-amount)
            return true
        }
    }
}

/// What a ledger-like class must do under racing threads; shared by the `Protected` and the
/// `@Synchronized` forms of the guide.
struct LedgerRace {
    static let threads = 8
    static let attemptsPerThread = 2_000
    static let opening = 5_000

    /// Racing threads withdraw 1 at a time, far more often than the balance allows, while one
    /// deposits and all read: every unit is withdrawn at most once, the balance never goes below
    /// zero, and the history accounts for every change.
    static func run(
        deposit: @escaping @Sendable (Int) -> Void,
        withdraw: @escaping @Sendable (Int) -> Bool,
        balance: @escaping @Sendable () -> Int,
        history: @escaping @Sendable () -> [Int]
    ) {
        deposit(opening)
        let succeeded = Protected(0)
        let negativeReads = Protected(0)
        let deposits = 100
        raceThreads(threads) { index in
            if index == 0 {
                for _ in 0..<deposits { deposit(1) }
                return
            }
            for _ in 0..<attemptsPerThread {
                if withdraw(1) { succeeded.write { $0 += 1 } }
                if balance() < 0 { negativeReads.write { $0 += 1 } }
            }
        }
        // 14,000 attempts for 5,100 units: the check and the update race all the time.
        #expect(succeeded.value + balance() == opening + deposits)
        #expect(succeeded.value >= opening)
        #expect(negativeReads.value == 0)
        let changes = history()
        #expect(changes.count == 1 + deposits + succeeded.value)
        #expect(changes.reduce(0, +) == balance())
        #expect(changes.filter { $0 == -1 }.count == succeeded.value)
    }
}

@Suite("Guide: replacing a serial queue per class", .offTheCooperativePool, .timeLimit(.minutes(1)))
struct SerialQueueGuideTests {
    @Test("Account: racing withdrawals never overdraw, and every change is in the history", arguments: 1...3)
    func accountUnderRace(round: Int) {
        let account = Account()
        LedgerRace.run(
            deposit: account.deposit, withdraw: account.withdraw,
            balance: { account.balance }, history: { account.history })
    }

    @Test("Account: a withdrawal larger than the balance fails and changes nothing")
    func overdraftRefused() {
        let account = Account()
        account.deposit(10)
        #expect(!account.withdraw(11))
        #expect(account.withdraw(10))
        #expect(account.balance == 0)
        #expect(account.history == [10, -10])
    }
}
