// swift-format-ignore-file
// The example of BatonMacros' documentation, with the type of `swaps` spelled out (committed as
// source, a property with accessors needs one; SynchronizedTests' `Tally` keeps an inferred type).
// Committed as the compiler expands it, so that the suites that race it run in every
// configuration, the sanitizer builds included, without building swift-syntax (the macro's
// compiler plugin). CommittedExpansionTests expands the class as written below with today's
// macro and fails if the result differs from the code after it; to change the class, change
// both (the test prints the expansion it expects).
//
// The class as written:
//
// @Synchronized
// final class Warrior {
//     var leftHand: String?
//     var rightHand: String?
//     var log: [String] = []
//     private(set) var swaps: Int = 0
//     let name: String
//
//     init(name: String) { self.name = name }
//
//     func swapHands() {
//         withLock {  // one critical section
//             (leftHand, rightHand) = (rightHand, leftHand)
//             swaps += 1
//         }
//     }
//
//     func juggle(_ item: String) -> String? {  // returns the dropped item
//         withLock {
//             defer { (leftHand, rightHand) = (rightHand, item) }
//             return leftHand
//         }
//     }
// }
//
// Its expansion:
import BatonLocks

final class Warrior {
    var leftHand: String? {
        @storageRestrictions(initializes: _leftHand)
        init(initialValue) {
            // The class's Sendable conformance cannot see this storage: check its type here.
            func sendable<Value: Sendable>(_ value: Value) -> Value {
                value
            }
            _leftHand = sendable(initialValue)
        }
        get {
            _batonLock.withReadLock {
                _leftHand
            }
        }
        set {
            _batonLock.withLock {
                _leftHand = newValue
            }
        }
        _modify {
            _batonLock.lock()
            defer {
                _batonLock.unlock()
            }
            yield &_leftHand
        }
    }

    @exclusivity(unchecked) nonisolated(unsafe) private var _leftHand: String?
    var rightHand: String? {
        @storageRestrictions(initializes: _rightHand)
        init(initialValue) {
            // The class's Sendable conformance cannot see this storage: check its type here.
            func sendable<Value: Sendable>(_ value: Value) -> Value {
                value
            }
            _rightHand = sendable(initialValue)
        }
        get {
            _batonLock.withReadLock {
                _rightHand
            }
        }
        set {
            _batonLock.withLock {
                _rightHand = newValue
            }
        }
        _modify {
            _batonLock.lock()
            defer {
                _batonLock.unlock()
            }
            yield &_rightHand
        }
    }

    @exclusivity(unchecked) nonisolated(unsafe) private var _rightHand: String?
    var log: [String] {
        @storageRestrictions(initializes: _log)
        init(initialValue) {
            // The class's Sendable conformance cannot see this storage: check its type here.
            func sendable<Value: Sendable>(_ value: Value) -> Value {
                value
            }
            _log = sendable(initialValue)
        }
        get {
            _batonLock.withReadLock {
                _log
            }
        }
        set {
            _batonLock.withLock {
                _log = newValue
            }
        }
        _modify {
            _batonLock.lock()
            defer {
                _batonLock.unlock()
            }
            yield &_log
        }
    }

    @exclusivity(unchecked) nonisolated(unsafe) private var _log: [String] = []
    private(set) var swaps: Int {
        @storageRestrictions(initializes: _swaps)
        init(initialValue) {
            // The class's Sendable conformance cannot see this storage: check its type here.
            func sendable<Value: Sendable>(_ value: Value) -> Value {
                value
            }
            _swaps = sendable(initialValue)
        }
        get {
            _batonLock.withReadLock {
                _swaps
            }
        }
        set {
            _batonLock.withLock {
                _swaps = newValue
            }
        }
        _modify {
            _batonLock.lock()
            defer {
                _batonLock.unlock()
            }
            yield &_swaps
        }
    }

    @exclusivity(unchecked) nonisolated(unsafe) private var _swaps: Int = 0
    let name: String

    init(name: String) { self.name = name }

    func swapHands() {
        withLock {  // one critical section
            (_leftHand, _rightHand) = (_rightHand, _leftHand)
            _swaps += 1
        }
    }

    func juggle(_ item: String) -> String? {
        withLock {
            defer {
                (_leftHand, _rightHand) = (_rightHand, item)
            }
            return _leftHand
        }
    }

    private let _batonLock = BatonLocks.RecursiveReadWriteLock(name: "Warrior")

    /// Runs `body` while holding this instance's lock, and returns what it returns: what
    /// `body` reads and writes of the instance's properties is one atomic step. `body` may
    /// use the properties and call methods that take the lock again.
    func withLock<Result, Failure: Error>(
        file: StaticString = #fileID, line: UInt = #line,
        _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try _batonLock.withLock(file: file, line: line, body)
    }
}

extension Warrior: Sendable {
}
