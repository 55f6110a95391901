import BatonTesting
import Testing

/// Hand-written histories with known answers, against the counter model of the check tests.
/// Ticks are written out: an operation whose response tick is below another's invocation tick
/// happened before it.
@Suite struct LinearizabilityCheckerTests {
    typealias Operation = CounterSpec.Operation

    static func op(_ input: Operation, _ output: Int?, _ invocation: UInt64, _ response: UInt64, thread: Int = 0)
        -> HistoryEntry<Operation, Int?>
    {
        HistoryEntry(input: input, output: output, invocation: invocation, response: response, thread: thread)
    }

    let checker = LinearizabilityChecker(model: CounterSpec())

    @Test func aSequentialHistoryIsLinearizable() {
        let history = [Self.op(.increment, nil, 1, 2), Self.op(.increment, nil, 3, 4), Self.op(.read, 2, 5, 6)]
        #expect(checker.check(history) == .linearizable)
    }

    @Test func overlappingOperationsMayTakeEffectInEitherOrder() {
        // The read overlaps the increment, so it may see the count before or after it.
        for seen in [0, 1] {
            let history = [Self.op(.increment, nil, 1, 4, thread: 0), Self.op(.read, seen, 2, 3, thread: 1)]
            #expect(checker.check(history) == .linearizable, "read → \(seen)")
        }
    }

    @Test func aReadMaySeeTheIncrementThatReturnedAndNotTheOneStillRunning() {
        // Only one order works: thread 1's increment, the read, then thread 0's long increment.
        // The search reaches the state after one increment by two different operations first;
        // both must be tried.
        let history = [
            Self.op(.increment, nil, 1, 10, thread: 0), Self.op(.increment, nil, 2, 3, thread: 1),
            Self.op(.read, 1, 4, 5, thread: 1),
        ]
        #expect(checker.check(history) == .linearizable)
    }

    @Test func aReadAfterAnIncrementReturnedMustSeeIt() throws {
        let history = [Self.op(.increment, nil, 1, 2, thread: 0), Self.op(.read, 0, 3, 4, thread: 1)]
        let violation = try #require(checker.check(history).violation)
        #expect(violation.blockedOperation.contains("read → 0"))
        #expect(violation.operationCount == 2)
    }

    @Test func aLostUpdateIsRejected() throws {
        let history = [
            Self.op(.increment, nil, 1, 4, thread: 0), Self.op(.increment, nil, 2, 3, thread: 1),
            Self.op(.read, 1, 5, 6, thread: 1),
        ]
        let violation = try #require(checker.check(history).violation)
        #expect(violation.linearizedCount == 2)
        #expect(violation.state == "2")
    }

    @Test func aReadCannotSeeAnIncrementThatStartedAfterItReturned() {
        let history = [Self.op(.read, 1, 1, 2, thread: 1), Self.op(.increment, nil, 3, 4, thread: 0)]
        #expect(!checker.check(history).isLinearizable)
    }

    @Test func anExhaustedStepBudgetIsUndecided() {
        let tight = LinearizabilityChecker(model: CounterSpec(), stepBudget: 1)
        // Eight overlapping increments and a read of 8: many orders to try, one step allowed.
        let history =
            (0..<8).map { Self.op(.increment, nil, UInt64($0), 100, thread: $0) } + [Self.op(.read, 9, 101, 102)]
        #expect(tight.check(history).isUndecided)
    }
}
