import Atomics
import BatonInternals

/// The contention counts shared by every lock of one name.
final class LockCounters: Sendable {
    let locks = ManagedAtomic<Int>(0)
    let acquisitions = ManagedAtomic<Int>(0)
    let contended = ManagedAtomic<Int>(0)
    let waitNanoseconds = ManagedAtomic<Int64>(0)

    func record(contendedFor wait: Duration?) {
        acquisitions.wrappingIncrement(ordering: .relaxed)
        if let wait {
            contended.wrappingIncrement(ordering: .relaxed)
            waitNanoseconds.wrappingIncrement(by: wait.wholeNanoseconds, ordering: .relaxed)
        }
    }

    func snapshot(name: String) -> LockStatistics {
        LockStatistics(
            name: name, locks: locks.load(ordering: .relaxed),
            acquisitions: acquisitions.load(ordering: .relaxed),
            contendedAcquisitions: contended.load(ordering: .relaxed),
            totalWait: .nanoseconds(waitNanoseconds.load(ordering: .relaxed)))
    }

    func reset() {
        acquisitions.store(0, ordering: .relaxed)
        contended.store(0, ordering: .relaxed)
        waitNanoseconds.store(0, ordering: .relaxed)
    }

    struct Registry {
        var byName: [String: LockCounters] = [:]
    }

    /// One entry per name ever given to a lock; names are few, so entries are kept.
    static let registry = InternalMutex(Registry())

    /// The counters for `name`, counting one more lock.
    static func forLock(named name: String) -> LockCounters {
        let counters = registry.withLock { registry in
            if let existing = registry.byName[name] { return existing }
            let created = LockCounters()
            registry.byName[name] = created
            return created
        }
        counters.locks.wrappingIncrement(ordering: .relaxed)
        return counters
    }
}
