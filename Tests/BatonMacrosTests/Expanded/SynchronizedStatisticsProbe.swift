// swift-format-ignore-file
// A class whose lock's statistics a test looks up by the class's name.
// Committed as the compiler expands it, so that the suites that race it run in every
// configuration, the sanitizer builds included, without building swift-syntax (the macro's
// compiler plugin). CommittedExpansionTests expands the class as written below with today's
// macro and fails if the result differs from the code after it; to change the class, change
// both (the test prints the expansion it expects).
//
// The class as written:
//
// @Synchronized
// final class SynchronizedStatisticsProbe {
//     var value: Int = 0
// }
//
// Its expansion:
import BatonLocks

final class SynchronizedStatisticsProbe {
    var value: Int {
        @storageRestrictions(initializes: _value)
        init(initialValue) {
            // The class's Sendable conformance cannot see this storage: check its type here.
            func sendable<Value: Sendable>(_ value: Value) -> Value {
                value
            }
            _value = sendable(initialValue)
        }
        get {
            _batonLock.withReadLock {
                _value
            }
        }
        set {
            _batonLock.withLock {
                _value = newValue
            }
        }
        _modify {
            _batonLock.lock()
            defer {
                _batonLock.unlock()
            }
            yield &_value
        }
    }

    @exclusivity(unchecked) nonisolated(unsafe) private var _value: Int = 0

    private let _batonLock = BatonLocks.RecursiveReadWriteLock(name: "SynchronizedStatisticsProbe")

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

extension SynchronizedStatisticsProbe: Sendable {
}
