import BatonLocks
import BatonTesting
import Foundation
import Testing

/// A counter's sequential specification: `increment` returns nothing, `read` the count.
struct CounterSpec: SequentialModel, Sendable {
    enum Operation: Sendable, Hashable, CustomStringConvertible {
        case increment, read
        var description: String { self == .increment ? "increment" : "read" }
    }
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

/// A counter per thread: correct on one thread, wrong as soon as a second thread reads what
/// the first wrote, whatever the timing. Checks of it fail in nearly every round, even on a
/// machine too busy to run two threads at once.
final class PerThreadCounter: Sendable {
    private let counts = Protected<[UInt: Int]>([:])

    func increment() { counts.write { $0[threadID(), default: 0] += 1 } }

    var count: Int { counts.read { $0[threadID()] ?? 0 } }
}

/// The calling thread's identity.
func threadID() -> UInt {
    UInt(bitPattern: Int(bitPattern: pthread_self()))
}

/// The counters under check: the racy one, the per-thread one, and `Protected`.
enum Counters {
    static func perThread(threads: Int = 2) -> LinearizabilityCheck<PerThreadCounter, CounterSpec.Operation, Int?> {
        LinearizabilityCheck(
            model: CounterSpec(), threads: threads, operations: [.increment, .read], make: { PerThreadCounter() }
        ) { counter, operation in
            switch operation {
            case .increment:
                counter.increment()
                return nil
            case .read:
                return counter.count
            }
        }
    }

    static func racy(threads: Int = 2, operationsPerThread: Int = 4)
        -> LinearizabilityCheck<AccessorLockedCounter, CounterSpec.Operation, Int?>
    {
        LinearizabilityCheck(
            model: CounterSpec(), threads: threads, operationsPerThread: operationsPerThread,
            operations: [.increment, .read], make: { AccessorLockedCounter() }
        ) { counter, operation in
            switch operation {
            case .increment:
                counter.count += 1
                return nil
            case .read:
                return counter.count
            }
        }
    }

    static func protected(operations: CheckOperations<CounterSpec.Operation> = [.increment, .read])
        -> LinearizabilityCheck<Protected<Int>, CounterSpec.Operation, Int?>
    {
        LinearizabilityCheck(model: CounterSpec(), operations: operations, make: { Protected(0) }) {
            counter, operation in
            switch operation {
            case .increment:
                counter.write { $0 += 1 }
                return nil
            case .read:
                return counter.value
            }
        }
    }
}

/// One check at a time: a check's threads race only while they have the cores.
@Suite(.serialized, .timeLimit(.minutes(1))) struct LinearizabilityCheckTests {
    /// Real threads must overlap to lose an update: run alone (`--no-parallel`, as CI does), the
    /// check finds it in its first few hundred rounds. Beside other suites' checks on a 2-core
    /// machine one thread may spend the budget waiting for a core, so up to five checks.
    @Test func findsTheLostUpdateOfAnAccessorLockedCounter() throws {
        var report = try Counters.racy().run()
        for _ in 1..<5 where report.outcome != .notLinearizable {
            report = try Counters.racy().run()
        }
        #expect(report.outcome == .notLinearizable)
        #expect(report.failingSeed != nil)
        #expect(report.explanation != nil)
        // Two increments and a read that misses one are the fewest operations that show it.
        #expect(report.operations.count <= report.operationsBeforeShrinking)
        #expect(report.operations.count >= 3)
        #expect(report.operations.count { $0.text == "increment" } >= 2)
    }

    @Test func shrinksTheFailureToAnIncrementAndAReadOnAnotherThread() throws {
        let report = try Counters.perThread().run(budget: CheckBudget(rounds: nil, time: .seconds(20)))
        try #require(report.outcome == .notLinearizable)
        #expect(report.operationsBeforeShrinking == 8)
        // The fewest is an increment and, on another thread, a read after it returned that
        // misses it. A smaller history is kept only if it fails again within its replays, which
        // a read that starts that late does only sometimes: how far the shrinking gets is up to
        // the machine (three operations most often, four at times), so the test asks that it
        // shrank and that what is left still shows the failure.
        #expect(report.operations.count < report.operationsBeforeShrinking, "\(report)")
        // What the shrunk history must still show: a read that starts after increments on
        // another thread have returned and counts fewer of them.
        let increments = report.operations.filter { $0.text == "increment" }
        let missed = report.operations.contains { read in
            guard read.text.hasPrefix("read → "), let value = Int(read.text.dropFirst("read → ".count)) else {
                return false
            }
            let before = increments.filter { $0.response.map { $0 < read.invocation } ?? false }
            return before.contains { $0.thread != read.thread } && value < before.count
        }
        #expect(missed, "\(report)")
        #expect(Set(report.operations.map(\.thread)).count == 2)
        #expect(report.description.contains("shrunk from 8 to \(report.operations.count) operations"))
    }

    @Test func theFailingSeedReplaysTheSameOperationsFirst() throws {
        let first = try Counters.perThread().run(seed: 99)
        let seed = try #require(first.failingSeed)
        let replay = try Counters.perThread().run(budget: CheckBudget(rounds: 1, time: .seconds(10)), seed: seed)
        // One round with the failing seed draws the same operations; whether the threads race
        // the same way is up to the machine, so only the round is compared.
        #expect(replay.seed == seed)
        #expect(replay.rounds == 1)
        #expect(replay.failingSeed == nil || replay.failingSeed == seed)
    }

    @Test func theSameSeedDrawsTheSameRoundsAndAnotherSeedOthers() throws {
        // Each round's `make` opens a list; its operations append to it.
        let drawn = Protected<[[CounterSpec.Operation]]>([])
        let check = LinearizabilityCheck(
            model: CounterSpec(), threads: 1, operationsPerThread: 6, operations: [.increment, .read],
            make: {
                drawn.write { $0.append([]) }
                return Protected(0)
            }
        ) { counter, operation -> Int? in
            drawn.write { $0[$0.count - 1].append(operation) }
            switch operation {
            case .increment:
                counter.write { $0 += 1 }
                return nil
            case .read:
                return counter.value
            }
        }
        func rounds(seed: UInt64) throws -> [[CounterSpec.Operation]] {
            drawn.write { $0 = [] }
            _ = try check.run(budget: CheckBudget(rounds: 5, time: .seconds(30)), seed: seed)
            return drawn.value
        }
        let first = try rounds(seed: 5)
        #expect(first.count == 3 + 5)
        #expect(try rounds(seed: 5) == first)
        #expect(try rounds(seed: 6) != first)
    }

    @Test func aCorrectCounterPassesItsWholeBudget() throws {
        let report = try Counters.protected().run(budget: CheckBudget(rounds: 300, time: .seconds(30)))
        #expect(report.passed, "\(report)")
        #expect(report.rounds == 300)
        #expect(report.operations.isEmpty)
        #expect(report.failingSeed == nil)
        #expect(report.description.hasPrefix("linearizable: 300 rounds (2 threads × 4 operations)"))
    }

    @Test func theReportNamesEveryOperationWithThreadOutputAndInterval() throws {
        let report = try Counters.perThread().run()
        try #require(report.outcome == .notLinearizable)
        let lines = report.description.split(separator: "\n").map(String.init)
        for (index, operation) in report.operations.enumerated() {
            let line = try #require(lines.first { $0.hasPrefix("  #\(index) thread \(operation.thread)  ") })
            #expect(line.contains(operation.text))
            #expect(line.hasSuffix("[\(operation.invocation)–\(operation.response!)]"))
            #expect(operation.invocation < operation.response!)
        }
        #expect(lines.last == "replay: run(seed: \(report.failingSeed!.hexForTest))")
    }

    // MARK: Bad input

    @Test func anEmptyOperationListIsAnErrorAtTheCall() {
        #expect(throws: LinearizabilityCheckError.noOperations) {
            try Counters.protected(operations: []).run()
        }
    }

    @Test(arguments: [
        CheckBudget(rounds: 0, time: .seconds(1)), CheckBudget(rounds: nil, time: .zero),
        CheckBudget(rounds: -1, time: .seconds(1)), CheckBudget(rounds: 10, time: .seconds(-1)),
    ])
    func aBudgetWithNoRoundIsAnErrorAtTheCall(budget: CheckBudget) {
        #expect(throws: LinearizabilityCheckError.emptyBudget(budget)) {
            try Counters.protected().run(budget: budget)
        }
    }

    @Test(arguments: [(0, 4), (2, 0), (-1, 1)])
    func aRoundWithNoThreadOrNoOperationIsAnErrorAtTheCall(threads: Int, operations: Int) {
        #expect(throws: LinearizabilityCheckError.invalidShape(threads: threads, operationsPerThread: operations)) {
            try Counters.racy(threads: threads, operationsPerThread: operations).run()
        }
    }

    @Test func aModelThatAcceptsNothingIsAnErrorAtTheCall() throws {
        struct Nothing: SequentialModel, Sendable {
            var initialState: Int { 0 }
            func step(_ state: Int, _ input: CounterSpec.Operation, _ output: Int?) -> Int? { nil }
        }
        let check = LinearizabilityCheck(
            model: Nothing(), operations: [.increment, .read], make: { Protected(0) }
        ) { counter, operation -> Int? in
            operation == .read ? counter.value : nil
        }
        let error = try #require(throws: LinearizabilityCheckError.self) { try check.run() }
        guard case .sequentialRunRejected(let report) = error else {
            Issue.record("expected sequentialRunRejected, got \(error)")
            return
        }
        #expect(report.rounds == 0)
        #expect(error.description.contains("the model rejects the object's operations run one at a time"))
        #expect(error.description.contains("run one at a time on one thread"))
    }

    // MARK: Hangs

    @Test func anOperationThatNeverReturnsFailsTheCheckByNameWithinTheBudget() throws {
        let check = LinearizabilityCheck(
            model: CounterSpec(), operations: [.increment, .read], make: { StuckOnASecondThread() }
        ) { counter, operation -> Int? in
            switch operation {
            case .increment:
                counter.increment()
                return nil
            case .read:
                return counter.count
            }
        }
        // The suite's time limit fails a check that waits for ever by this test's name.
        let report = try check.run(budget: CheckBudget(time: .milliseconds(500)))
        #expect(report.outcome == .hung)
        #expect(!report.hungOperations.isEmpty)
        #expect(report.hungOperations.allSatisfy { $0.text == "increment" && $0.response == nil })
        #expect(report.description.contains("increment … never returned"))
        #expect(report.description.contains("still inside: thread"))
        #expect(report.rounds >= 1, "the sequential runs do not hang: a concurrent round must")
    }
}

/// A counter whose increments from any thread but the first to increment wait for a wake-up
/// that never comes: run one at a time on one thread it is correct, so only a concurrent round
/// can find the hang.
final class StuckOnASecondThread: @unchecked Sendable {  // `lock` guards `storage` and `owner`
    private let lock = Lock()
    private var storage = 0
    private var owner: UInt?
    private let never = DispatchSemaphore(value: 0)

    func increment() {
        let mine = lock.withLock {
            owner = owner ?? threadID()
            storage += 1
            return owner == threadID()
        }
        if !mine { never.wait() }
    }

    var count: Int { lock.withLock { storage } }
}

extension UInt64 {
    var hexForTest: String {
        let digits = String(self, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: 16 - digits.count) + digits
    }
}
