import BatonLocks
import BatonTesting
import Testing

/// A counter's sequential specification: `increment` returns nothing, `read` the count.
struct CounterSpec: SequentialModel, Sendable {
    enum Operation: Sendable, Hashable { case increment, read }
    var initialState: Int { 0 }
    func step(_ count: Int, _ operation: Operation, _ output: Int?) -> Int? {
        switch operation {
        case .increment: output == nil ? count + 1 : nil
        case .read: output == count ? count : nil
        }
    }
    func describe(_ operation: Operation, _ output: Int?) -> String {
        switch operation {
        case .increment: "increment"
        case .read: "read → \(output.map(String.init) ?? "nil")"
        }
    }
}

/// Every accessor locked, and `count += 1` still two critical sections.
final class AccessorLockedCounter: @unchecked Sendable {  // `lock` guards `storage`
    private let lock = Lock()
    private var storage = 0
    var count: Int {
        get { lock.withLock { storage } }
        set { lock.withLock { storage = newValue } }
    }
}

@Suite(.timeLimit(.minutes(1))) struct LinearizabilityCheckTests {
    static func check(_ make: @escaping () -> AccessorLockedCounter, atomic: Bool)
        -> LinearizabilityCheck<AccessorLockedCounter, CounterSpec.Operation, Int?>
    {
        LinearizabilityCheck(model: CounterSpec(), operations: [.increment, .read], make: make) { counter, operation in
            switch operation {
            case .increment:
                counter.count += 1
                return nil
            case .read:
                return counter.count
            }
        }
    }

    @Test func findsTheLostUpdate() throws {
        let report = try Self.check({ AccessorLockedCounter() }, atomic: false).run()
        print(report)
        #expect(report.outcome == .notLinearizable)
    }

    @Test func protectedCounterPasses() throws {
        let check = LinearizabilityCheck(
            model: CounterSpec(), operations: [.increment, .read], make: { Protected(0) }
        ) { counter, operation -> Int? in
            switch operation {
            case .increment:
                counter.write { $0 += 1 }
                return nil
            case .read:
                return counter.value
            }
        }
        let report = try check.run()
        print(report)
        #expect(report.passed)
    }
}
