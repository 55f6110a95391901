import BatonLocks
import BatonTestSupport
import Foundation
import Testing

/// The example from `Protected`'s documentation: a class made thread-safe by moving its stored
/// properties into one protected struct, with composed actions that are each one `write`.
private final class Warrior: Sendable {
    private struct Hands {
        var left: String?
        var right: String?
    }
    private let hands: Protected<Hands>

    init(left: String?, right: String?) {
        hands = Protected(Hands(left: left, right: right))
    }

    var leftHand: String? {
        get { hands.read { $0.left } }
        set { hands.write { $0.left = newValue } }
    }
    var rightHand: String? {
        get { hands.read { $0.right } }
        set { hands.write { $0.right = newValue } }
    }

    /// Both hands in one read, so the pair is consistent.
    var bothHands: (left: String?, right: String?) {
        hands.read { ($0.left, $0.right) }
    }

    func swapHands() {
        hands.write { swap(&$0.left, &$0.right) }
    }

    /// Puts `item` in the right hand, moves the right hand's item to the left, and returns what
    /// the left hand dropped.
    func juggle(_ item: String) -> String? {
        hands.write { hands in
            let dropped = hands.left
            hands.left = hands.right
            hands.right = item
            return dropped
        }
    }
}

@Suite("Protected")
struct ProtectedTests {
    static let threads = 8
    static let incrementsPerThread = reducedUnderSanitizer(100_000, by: 5)

    @Test(
        "write: 8 threads × 100,000 increments (20,000 under a sanitizer) of the protected Int lose none",
        arguments: 1...3)
    func writeExcludes(round: Int) {
        let count = Protected(0)
        let finished = raceThreads(Self.threads) { _ in
            for _ in 0..<Self.incrementsPerThread {
                count.write { $0 += 1 }
            }
        }
        // A thread left behind may hold the lock: touching it again would hang (raceThreads
        // has recorded the failure).
        guard finished else { return }
        #expect(count.value == Self.threads * Self.incrementsPerThread)
    }

    @Test("value is a snapshot: changing it leaves the state alone, later writes leave it alone")
    func valueIsASnapshot() {
        let numbers = Protected([1, 2, 3])
        var snapshot = numbers.value
        snapshot.append(4)
        #expect(numbers.value == [1, 2, 3])

        numbers.write { $0.append(9) }
        #expect(snapshot == [1, 2, 3, 4])
        #expect(numbers.value == [1, 2, 3, 9])
    }

    @Test("read and write return their body's value; write's changes are kept")
    func bodiesReturnTheirValue() {
        let count = Protected(1)
        let described = count.write { count -> String in
            count += 1
            return "now \(count)"
        }
        #expect(described == "now 2")
        #expect(count.read { $0 * 10 } == 20)
        #expect(count.value == 2)
    }

    @Test("Two threads are inside read at the same time")
    func readsAreShared() {
        let state = Protected("shared")
        let arrived = [DispatchSemaphore(value: 0), DispatchSemaphore(value: 0)]
        let met = Locked(0)
        let finished = raceThreads(2) { index in
            state.read { _ in
                arrived[index].signal()
                // Succeeds in time only if the other thread is inside its read as well.
                if wait(for: arrived[1 - index]) {
                    met.withValue { $0 += 1 }
                }
            }
        }
        // A thread left behind may hold the lock: touching it again would hang (raceThreads
        // has recorded the failure).
        guard finished else { return }
        #expect(met.get() == 2)
    }

    @Test("Errors thrown in read and write keep their type; write keeps earlier changes; lock released")
    func bodiesRethrowAndRelease() {
        let count = Protected(0)
        do {
            try count.write { (count: inout Int) throws(TestError) -> Void in
                count = 5
                throw .boom
            }
            Issue.record("write returned instead of throwing")
        } catch {
            let thrown: TestError = error
            #expect(thrown == .boom)
        }
        do {
            _ = try count.read { (_: borrowing Int) throws(TestError) -> Int in throw .boom }
            Issue.record("read returned instead of throwing")
        } catch {
            let thrown: TestError = error
            #expect(thrown == .boom)
        }
        // Released by both: a write from another thread goes through.
        #expect(runOnAnotherThread { count.write { $0 += 1 } } != nil)
        #expect(count.value == 6)
    }

    @Test(
        "Warrior from 8 threads: swaps and juggles conserve the items, each dropped exactly once",
        arguments: 1...3)
    func composedActionsConserveItems(round: Int) {
        let juggles = 2_000
        let warrior = Warrior(left: "a", right: "b")
        let dropped = Locked<[String]>([])
        let emptyDrops = Locked(0)
        let unequalHandsSeen = Locked(0)
        let finished = raceThreads(Self.threads) { thread in
            var myDrops: [String] = []
            var myEmptyDrops = 0
            var myUnequal = 0
            for step in 0..<juggles {
                warrior.swapHands()
                if let item = warrior.juggle("t\(thread)-\(step)") {
                    myDrops.append(item)
                } else {
                    myEmptyDrops += 1
                }
                // Every item is distinct, so a swap or juggle seen half done would show the same
                // item in both hands (or an empty one).
                let hands = warrior.bothHands
                if hands.left == nil || hands.right == nil || hands.left == hands.right {
                    myUnequal += 1
                }
            }
            dropped.withValue { $0 += myDrops }
            emptyDrops.withValue { $0 += myEmptyDrops }
            unequalHandsSeen.withValue { $0 += myUnequal }
        }
        // A thread left behind may hold the lock: touching it again would hang (raceThreads
        // has recorded the failure).
        guard finished else { return }

        // Both hands start full and a juggle keeps them full, so nothing is ever dropped from
        // an empty hand, and the items in = the items out.
        let juggledIn = (0..<Self.threads).flatMap { thread in (0..<juggles).map { "t\(thread)-\($0)" } }
        let itemsIn = ["a", "b"] + juggledIn
        let hands = warrior.bothHands
        let itemsOut = dropped.get() + [hands.left, hands.right].compactMap { $0 }
        #expect(emptyDrops.get() == 0)
        #expect(unequalHandsSeen.get() == 0)
        #expect(itemsOut.count == itemsIn.count)
        #expect(itemsOut.sorted() == itemsIn.sorted())
    }
}
