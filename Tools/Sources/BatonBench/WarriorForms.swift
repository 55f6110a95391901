import BatonLocks
import Dispatch
import Foundation

/// The seed's `Warrior` — two hands, a swap, a juggle — written each way a Swift developer
/// makes a class thread-safe. Every form keeps the same invariant: a juggle drops the left
/// hand's item and shifts the right one left, all as one step.
protocol WarriorForm: AnyObject, Sendable {
    init()
    var leftHand: String? { get set }
    func swapHands()
    func juggle(_ item: String) -> String?
}

/// The seed's pattern: a private serial queue per instance, `sync` in every accessor.
final class SerialQueueWarrior: WarriorForm, @unchecked Sendable {  // the fields are touched on `queue` only
    private let queue = DispatchQueue(label: "bench.warrior")
    @exclusivity(unchecked) private var left: String?
    @exclusivity(unchecked) private var right: String?
    init() {}
    var leftHand: String? {
        get { queue.sync { left } }
        set { queue.sync { left = newValue } }
    }
    func swapHands() { queue.sync { swap(&left, &right) } }
    func juggle(_ item: String) -> String? {
        queue.sync {
            defer { (left, right) = (right, item) }
            return left
        }
    }
}

/// `NSLock` by hand around every accessor.
final class NSLockWarrior: WarriorForm, @unchecked Sendable {  // the fields are guarded by `lock`
    private let lock = NSLock()
    @exclusivity(unchecked) private var left: String?
    @exclusivity(unchecked) private var right: String?
    init() {}
    var leftHand: String? {
        get { lock.withLock { left } }
        set { lock.withLock { left = newValue } }
    }
    func swapHands() { lock.withLock { swap(&left, &right) } }
    func juggle(_ item: String) -> String? {
        lock.withLock {
            defer { (left, right) = (right, item) }
            return left
        }
    }
}

/// `Protected` by hand: the hands in one struct, a `read` or `write` per accessor (the example
/// in `Protected`'s documentation).
final class ProtectedWarrior: WarriorForm, Sendable {
    private struct Hands {
        var left: String?
        var right: String?
    }
    private let hands = Protected(Hands())
    init() {}
    var leftHand: String? {
        get { hands.read { $0.left } }
        set { hands.write { $0.left = newValue } }
    }
    func swapHands() { hands.write { swap(&$0.left, &$0.right) } }
    func juggle(_ item: String) -> String? {
        hands.write { hands in
            defer { (hands.left, hands.right) = (hands.right, item) }
            return hands.left
        }
    }
}

/// An actor: the Swift-concurrency answer, called with `await` from tasks.
actor ActorWarrior {
    private var left: String?
    private var right: String?
    var leftHand: String? { left }
    func setLeftHand(_ item: String?) { left = item }
    func swapHands() { swap(&left, &right) }
    func juggle(_ item: String) -> String? {
        defer { (left, right) = (right, item) }
        return left
    }
}
