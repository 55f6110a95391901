import BatonStress
import BatonTesting
import Testing

/// Hand-made histories with known answers. Ticks are written out by hand: an operation whose
/// response tick is below another's invocation tick happened before it.
@Suite struct LinearizabilityCheckerTests {
    typealias Counter = CounterModel.Operation
    typealias Cache = CacheModel<Int, Int>.Operation

    static func op<I, O>(_ input: I, _ output: O, _ invocation: UInt64, _ response: UInt64, thread: Int = 0)
        -> HistoryEntry<I, O>
    {
        HistoryEntry(input: input, output: output, invocation: invocation, response: response, thread: thread)
    }

    // MARK: Accepted

    @Test func sequentialCounterHistoryIsLinearizable() {
        let history = [
            Self.op(Counter.increment, 1, 1, 2),
            Self.op(Counter.read, 1, 3, 4),
            Self.op(Counter.increment, 2, 5, 6),
        ]
        #expect(LinearizabilityChecker(model: CounterModel()).check(history) == .linearizable)
    }

    /// A starts first but must take effect last: it returned 3, so both others went before it.
    @Test func overlappingOperationsMayTakeEffectOutOfStartOrder() {
        let history = [
            Self.op(Counter.increment, 3, 1, 20, thread: 0),
            Self.op(Counter.increment, 1, 2, 10, thread: 1),
            Self.op(Counter.read, 0, 3, 4, thread: 2),
            Self.op(Counter.increment, 2, 11, 19, thread: 1),
            Self.op(Counter.read, 3, 21, 22, thread: 2),
        ]
        #expect(LinearizabilityChecker(model: CounterModel()).check(history) == .linearizable)
    }

    @Test func counterStartingElsewhereUsesItsInitialValue() {
        let history = [Self.op(Counter.increment, 41, 1, 2), Self.op(Counter.read, 41, 3, 4)]
        #expect(LinearizabilityChecker(model: CounterModel(initialValue: 40)).check(history) == .linearizable)
        #expect(!LinearizabilityChecker(model: CounterModel()).check(history).isLinearizable)
    }

    @Test func cacheMayLoseAnEntryAndReportTheWriteLater() {
        let history: [HistoryEntry<Cache, Int?>] = [
            Self.op(.set(1, 10), nil, 1, 2),
            Self.op(.get(1), nil, 3, 4),  // evicted
            Self.op(.getOrInsert(1, 11), 11, 5, 6),  // found it empty, stored 11
            Self.op(.get(1), 11, 7, 10),
            Self.op(.set(1, 12), nil, 8, 9),  // overlaps the get above, which may go first
            Self.op(.remove(1), 12, 11, 12),
            Self.op(.get(1), nil, 13, 14),
        ]
        #expect(LinearizabilityChecker(model: CacheModel<Int, Int>()).check(history) == .linearizable)
    }

    @Test func emptyHistoryIsLinearizable() {
        let history: [HistoryEntry<Counter, Int>] = []
        #expect(LinearizabilityChecker(model: CounterModel()).check(history) == .linearizable)
        #expect(
            LinearizabilityChecker(model: CounterModel()).check(history, partitionedBy: { _ in 0 }) == .linearizable)
    }

    // MARK: Rejected

    @Test func staleReadAfterACompletedWriteIsRejected() throws {
        let history: [HistoryEntry<Cache, Int?>] = [
            Self.op(.set(1, 10), nil, 1, 2, thread: 0),
            Self.op(.set(1, 20), nil, 3, 4, thread: 1),
            Self.op(.get(1), 10, 5, 6, thread: 2),
        ]
        let violation = try #require(LinearizabilityChecker(model: CacheModel<Int, Int>()).check(history).violation)
        #expect(violation.partition == nil)
        #expect(violation.blockedOperation.contains("get(1) → 10"))
        #expect(violation.state == "holds 20")
        #expect(violation.linearizedCount == 2)
    }

    @Test func lostCounterUpdateIsRejected() throws {
        // Two increments that each read 0 and wrote 1.
        let history = [
            Self.op(Counter.increment, 1, 1, 4, thread: 0),
            Self.op(Counter.increment, 1, 2, 3, thread: 1),
            Self.op(Counter.read, 1, 5, 6, thread: 0),
        ]
        let violation = try #require(LinearizabilityChecker(model: CounterModel()).check(history).violation)
        #expect(violation.linearizedCount == 1)
        #expect(violation.blockedOperation.contains("increment → 1"))
        #expect(violation.overlappingOperations.count == 0)
    }

    @Test func readOfAValueNeverWrittenIsRejected() throws {
        let history: [HistoryEntry<Cache, Int?>] = [
            Self.op(.set(1, 10), nil, 1, 4),
            Self.op(.get(1), 99, 2, 3),
        ]
        let violation = try #require(LinearizabilityChecker(model: CacheModel<Int, Int>()).check(history).violation)
        #expect(violation.blockedOperation.contains("get(1) → 99"))
        #expect(violation.state == "holds 10")
        #expect(violation.linearizedTail.count == 1)
        #expect(violation.linearizedTail[0].contains("set(1, 10)"))
    }

    @Test func entryThatHasGoneDoesNotComeBack() {
        let history: [HistoryEntry<Cache, Int?>] = [
            Self.op(.set(1, 10), nil, 1, 2),
            Self.op(.get(1), nil, 3, 4),
            Self.op(.get(1), 10, 5, 6),
        ]
        #expect(!LinearizabilityChecker(model: CacheModel<Int, Int>()).check(history).isLinearizable)
    }

    @Test func readThatOverlapsNothingCannotSeeALaterWrite() {
        let history = [
            Self.op(Counter.read, 1, 1, 2),
            Self.op(Counter.increment, 1, 3, 4),
        ]
        #expect(!LinearizabilityChecker(model: CounterModel()).check(history).isLinearizable)
    }

    // MARK: Partitions

    @Test func partitionedHistoryNamesTheOneBadKey() throws {
        var history: [HistoryEntry<Cache, Int?>] = []
        var tick: UInt64 = 0
        func add(_ input: Cache, _ output: Int?) {
            history.append(Self.op(input, output, tick + 1, tick + 2))
            tick += 2
        }
        for key in 1...3 {
            add(.set(key, key * 10), nil)
            add(.get(key), key * 10)
        }
        add(.set(2, 21), nil)
        add(.get(1), 10)
        add(.get(2), 20)  // stale: 21 was written after it
        add(.get(3), nil)
        let checker = LinearizabilityChecker(model: CacheModel<Int, Int>())
        #expect(checker.check(history).isLinearizable == false)
        let violation = try #require(checker.check(history, partitionedBy: \.key).violation)
        #expect(violation.partition == "2")
        #expect(violation.operationCount == 4)
        #expect(violation.blockedOperation.contains("get(2) → 20"))
        #expect(violation.description.contains("partition 2"))
    }

    @Test func partitionsAreCheckedEachFromTheInitialState() {
        let history: [HistoryEntry<Cache, Int?>] = [
            Self.op(.set(1, 10), nil, 1, 2),
            Self.op(.get(2), nil, 3, 4),
            Self.op(.get(1), 10, 5, 6),
        ]
        #expect(
            LinearizabilityChecker(model: CacheModel<Int, Int>()).check(history, partitionedBy: \.key) == .linearizable)
    }

    // MARK: Budget

    @Test func exhaustedBudgetIsUndecided() {
        // Forty overlapping increments: linearizable, but only in one order of forty steps.
        let history = (0..<40).map { index in
            Self.op(Counter.increment, 40 - index, UInt64(index + 1), 100, thread: index)
        }
        #expect(LinearizabilityChecker(model: CounterModel()).check(history) == .linearizable)
        let tight = LinearizabilityChecker(model: CounterModel(), stepBudget: 30)
        #expect(tight.check(history) == .undecided(partitions: [nil], stepBudget: 30))
        #expect(tight.check(history, partitionedBy: { _ in "all" }) == .undecided(partitions: ["all"], stepBudget: 30))
    }

    // MARK: Nondeterministic models

    /// A register whose writes may be lost.
    struct LossyRegister: NondeterministicModel {
        enum Operation: Hashable {
            case write(Int)
            case read
        }
        var initialState: Int { 0 }
        func successors(of state: Int, _ input: Operation, _ output: Int) -> Set<Int> {
            switch input {
            case .write(let value): [value, state]
            case .read: output == state ? [state] : []
            }
        }
    }

    @Test func nondeterministicModelFollowsEveryPossibleState() throws {
        let checker = LinearizabilityChecker(model: LossyRegister())
        let lost = [
            Self.op(LossyRegister.Operation.write(1), 0, 1, 2),
            Self.op(LossyRegister.Operation.write(2), 0, 3, 4),
            Self.op(LossyRegister.Operation.read, 1, 5, 6),
        ]
        #expect(checker.check(lost) == .linearizable)
        let invented = lost.dropLast() + [Self.op(LossyRegister.Operation.read, 3, 5, 6)]
        let violation = try #require(checker.check(Array(invented)).violation)
        #expect(violation.state == "one of {0, 1, 2}")
    }
}
