import Foundation

/// Plain storage with no synchronisation of its own: each use says which lock under test guards
/// it, so a lock that fails to exclude shows up as lost updates or torn reads.
final class Guarded<Value>: @unchecked Sendable {
    var value: Value

    init(_ value: Value) {
        self.value = value
    }
}

/// The tests' own bookkeeping (flags, logs, results handed between threads), behind an
/// `NSLock` so that it never depends on the locks under test.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    /// Guarded by `lock`.
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withValue<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    func get() -> Value {
        withValue { $0 }
    }

    func set(_ newValue: Value) {
        withValue { $0 = newValue }
    }
}

/// The error the tests throw through the locks' bodies.
enum TestError: Error, Equatable {
    case boom
}
