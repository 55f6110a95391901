#if Macros
import BatonMacros
import BatonTestSupport
import Testing

@Suite("Guide: replacing a serial queue per class, with @Synchronized", .offTheCooperativePool, .timeLimit(.minutes(1)))
struct SynchronizedGuideTests {
    @Test("Ledger: racing withdrawals never overdraw, and every change is in the history", arguments: 1...3)
    func ledgerUnderRace(round: Int) {
        let ledger = Ledger()
        LedgerRace.run(
            deposit: ledger.deposit, withdraw: ledger.withdraw,
            balance: { ledger.balance }, history: { ledger.history })
    }

    @Test("Ledger is Sendable as the compiler checks it")
    func ledgerIsSendable() {
        func requireSendable<T: Sendable>(_: T.Type) -> Bool { true }
        #expect(requireSendable(Ledger.self))
    }
}
#endif
