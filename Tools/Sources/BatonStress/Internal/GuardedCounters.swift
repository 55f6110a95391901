import BatonLocks
import Foundation

/// A counter of two fields that every increment bumps together inside one critical section, so
/// a reader that ever sees them differ has seen a half-done write.
protocol GuardedCounter: AnyObject, Sendable {
    /// Adds one to both fields; returns the first field's new value.
    func increment() -> Int
    /// Both fields, read in one critical section; `trying` asks for the lock's non-blocking
    /// variant first where it has one.
    func read(trying: Bool) -> (first: Int, second: Int)
}

/// Now and then a writer yields the processor inside its critical section, so other threads
/// pile up on the lock and its slow (parking) path runs, not just the uncontended one.
private func yieldInsideCriticalSection(_ value: Int) {
    if value & 63 == 0 { sched_yield() }
}

/// Both fields in one `Protected` value.
final class ProtectedCounter: GuardedCounter {
    private struct Fields {
        var first = 0
        var second = 0
    }

    private let fields = Protected(Fields(), name: "stress.protected")

    func increment() -> Int {
        fields.write { fields in
            fields.first += 1
            yieldInsideCriticalSection(fields.first)
            fields.second += 1
            return fields.first
        }
    }

    func read(trying: Bool) -> (first: Int, second: Int) {
        if trying {
            let snapshot = fields.value
            return (snapshot.first, snapshot.second)
        }
        return fields.read { ($0.first, $0.second) }
    }
}

/// Two fields guarded by a `Lock`.
final class LockCounter: GuardedCounter {
    private let lock = Lock(name: "stress.lock")
    private var first = 0  // guarded by `lock`
    private var second = 0  // guarded by `lock`

    func increment() -> Int {
        lock.withLock {
            first += 1
            yieldInsideCriticalSection(first)
            second += 1
            return first
        }
    }

    func read(trying: Bool) -> (first: Int, second: Int) {
        if trying, let fields = lock.tryWithLock({ (first, second) }) { return fields }
        return lock.withLock { (first, second) }
    }
}

// `first` and `second` are only touched inside `lock`.
extension LockCounter: @unchecked Sendable {}

/// Two fields guarded by a `RecursiveLock` that every access enters twice.
final class RecursiveLockCounter: GuardedCounter {
    private let lock = RecursiveLock(name: "stress.recursive-lock")
    private var first = 0  // guarded by `lock`
    private var second = 0  // guarded by `lock`

    func increment() -> Int {
        lock.withLock {
            first += 1
            yieldInsideCriticalSection(first)
            lock.withLock { second += 1 }
            return first
        }
    }

    func read(trying: Bool) -> (first: Int, second: Int) {
        if trying, let fields = lock.tryWithLock({ lock.withLock { (first, second) } }) { return fields }
        return lock.withLock { (first, lock.withLock { second }) }
    }
}

// `first` and `second` are only touched inside `lock`.
extension RecursiveLockCounter: @unchecked Sendable {}

/// Two fields written under a `ReadWriteLock`'s write lock and read under its read lock.
final class ReadWriteLockCounter: GuardedCounter {
    private let lock = ReadWriteLock(name: "stress.rwlock")
    private var first = 0  // guarded by `lock`
    private var second = 0  // guarded by `lock`

    func increment() -> Int {
        lock.withWriteLock {
            first += 1
            yieldInsideCriticalSection(first)
            second += 1
            return first
        }
    }

    func read(trying: Bool) -> (first: Int, second: Int) {
        if trying, let fields = lock.tryWithReadLock({ (first, second) }) { return fields }
        return lock.withReadLock { (first, second) }
    }
}

// `first` and `second` are only touched inside `lock`.
extension ReadWriteLockCounter: @unchecked Sendable {}
