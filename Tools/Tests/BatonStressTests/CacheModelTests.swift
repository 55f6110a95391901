import BatonStress
import BatonTesting
import Testing

/// The cache model's quiet lookups and lifetimes: histories with known answers, and seeded
/// bugs the model must reject. Ticks are written out by hand, as in
/// ``LinearizabilityCheckerTests``; `contains` records `0` for true and `nil` for false.
@Suite struct CacheModelTests {
    typealias Cache = CacheModel<Int, Int>.Operation

    /// A fresh checker (checkers are not `Sendable`, so none is shared between tests).
    static var checker: LinearizabilityChecker<Cache, Int?> { LinearizabilityChecker(model: CacheModel<Int, Int>()) }

    /// Each operation after the one before, one tick apart: a sequential history.
    static func sequential(_ operations: [(Cache, Int?)]) -> [HistoryEntry<Cache, Int?>] {
        operations.enumerated().map { index, operation in
            let tick = UInt64(2 * index + 1)
            return HistoryEntry(input: operation.0, output: operation.1, invocation: tick, response: tick + 1)
        }
    }

    // MARK: Accepted

    @Test func quietLookupsReadLikeGet() {
        let history = Self.sequential([
            (.contains(1), nil),  // never written
            (.set(1, 10), nil),
            (.peek(1), 10),
            (.contains(1), 0),
            (.get(1), 10),
            (.contains(1), nil),  // expired just now
            (.peek(1), nil),
            (.setWithLifetime(1, 11), nil),
            (.contains(1), 0),
            (.peek(1), 11),
            (.getOrInsert(1, 12), 11),
        ])
        #expect(Self.checker.check(history) == .linearizable)
    }

    @Test func writeWithALifetimeMayGoAtOnce() {
        let history = Self.sequential([
            (.setWithLifetime(1, 10), nil),
            (.peek(1), nil),
            (.getOrInsert(1, 11), 11),
            (.remove(1), 11),
            (.contains(1), nil),
        ])
        #expect(Self.checker.check(history) == .linearizable)
    }

    /// A `contains` that overlaps a write may see the key before or after it.
    @Test func containsOverlappingAWriteMaySeeEither() {
        for seen in [0, nil] as [Int?] {
            let history: [HistoryEntry<Cache, Int?>] = [
                HistoryEntry(input: .setWithLifetime(1, 10), output: nil, invocation: 1, response: 4, thread: 0),
                HistoryEntry(input: .contains(1), output: seen, invocation: 2, response: 3, thread: 1),
            ]
            #expect(Self.checker.check(history) == .linearizable)
        }
    }

    // MARK: Seeded bugs

    /// `contains` says true for a key that was never written.
    @Test func containsTrueOnAKeyNeverWrittenIsRejected() throws {
        let history = Self.sequential([(.contains(1), 0)])
        let violation = try #require(Self.checker.check(history).violation)
        #expect(violation.blockedOperation.contains("contains(1) → true"))
        #expect(violation.state == "empty")
    }

    /// `contains` says true after a lookup saw the key empty: the entry came back.
    @Test func containsTrueAfterAMissIsRejected() throws {
        let history = Self.sequential([
            (.set(1, 10), nil),
            (.get(1), nil),
            (.contains(1), 0),
        ])
        let violation = try #require(Self.checker.check(history).violation)
        #expect(violation.blockedOperation.contains("contains(1) → true"))
        #expect(violation.linearizedCount == 2)
    }

    /// A peek returns a value after a miss: the entry came back.
    @Test func peekAfterAMissIsRejected() throws {
        let history = Self.sequential([
            (.set(1, 10), nil),
            (.get(1), nil),
            (.peek(1), 10),
        ])
        let violation = try #require(Self.checker.check(history).violation)
        #expect(violation.blockedOperation.contains("peek(1) → 10"))
        #expect(violation.state == "empty")
    }

    /// A peek returns a value after `contains` said the key was empty.
    @Test func peekAfterContainsFalseIsRejected() throws {
        let history = Self.sequential([
            (.setWithLifetime(1, 10), nil),
            (.contains(1), nil),
            (.peek(1), 10),
        ])
        let violation = try #require(Self.checker.check(history).violation)
        #expect(violation.blockedOperation.contains("peek(1) → 10"))
        #expect(violation.linearizedTail.last?.contains("contains(1) → false") == true)
    }

    /// A peek returns the value a completed write with a lifetime replaced.
    @Test func stalePeekAfterAWriteWithALifetimeIsRejected() throws {
        let history: [HistoryEntry<Cache, Int?>] = [
            HistoryEntry(input: .set(1, 10), output: nil, invocation: 1, response: 2, thread: 0),
            HistoryEntry(input: .setWithLifetime(1, 20), output: nil, invocation: 3, response: 4, thread: 1),
            HistoryEntry(input: .peek(1), output: 10, invocation: 5, response: 6, thread: 2),
        ]
        let violation = try #require(Self.checker.check(history).violation)
        #expect(violation.blockedOperation.contains("peek(1) → 10"))
        #expect(violation.state == "holds 20")
        #expect(violation.linearizedTail.last?.contains("setWithLifetime(1, 20)") == true)
    }

    /// A peek on another key's value: partitions keep the keys apart.
    @Test func peekOfAValueNeverWrittenToTheKeyIsRejected() throws {
        let history = Self.sequential([
            (.set(1, 10), nil),
            (.setWithLifetime(2, 20), nil),
            (.peek(2), 10),
        ])
        let violation = try #require(Self.checker.check(history, partitionedBy: \.key).violation)
        #expect(violation.partition == "2")
        #expect(violation.blockedOperation.contains("peek(2) → 10"))
    }

    // MARK: Descriptions

    @Test func operationsDescribeThemselves() {
        let model = CacheModel<Int, Int>()
        #expect(model.describe(Cache.contains(3), 0) == "contains(3) → true")
        #expect(model.describe(Cache.contains(3), nil) == "contains(3) → false")
        #expect(model.describe(Cache.peek(3), 7) == "peek(3) → 7")
        #expect(model.describe(Cache.peek(3), nil) == "peek(3) → nil")
        #expect(model.describe(Cache.setWithLifetime(3, 7), nil) == "setWithLifetime(3, 7)")
        #expect([Cache.peek(3), .contains(3), .setWithLifetime(3, 7)].allSatisfy { $0.key == 3 })
    }
}
