// swift-format-ignore-file
// The bench's `@Synchronized` contender, as the compiler expands it: the bench measures exactly
// the code a user of the macro gets, without building swift-syntax (the macro's compiler
// plugin) in release for a benchmark. BatonMacrosTests' CommittedExpansionTests expands
// the class as written below with today's macro and fails if the result differs from the code
// after it; to change the class, change both (the test prints the expansion it expects).
//
// The class as written:
//
// @Synchronized
// final class SynchronizedWarrior: WarriorForm {
//     var leftHand: String?
//     var rightHand: String?
//
//     init() {}
//
//     func swapHands() {
//         withLock { (leftHand, rightHand) = (rightHand, leftHand) }
//     }
//
//     func juggle(_ item: String) -> String? {
//         withLock {
//             defer { (leftHand, rightHand) = (rightHand, item) }
//             return leftHand
//         }
//     }
// }
//
// Its expansion:
import BatonLocks

final class SynchronizedWarrior: WarriorForm {
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

    init() {}

    func swapHands() {
        withLock {
            (_leftHand, _rightHand) = (_rightHand, _leftHand)
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

    private let _batonLock = BatonLocks.RecursiveReadWriteLock(name: "SynchronizedWarrior")

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

extension SynchronizedWarrior: Sendable {
}
