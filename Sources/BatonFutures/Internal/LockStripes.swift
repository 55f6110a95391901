import BatonLocks

/// A fixed set of locks shared by all futures, each future guarded by the one its address picks.
///
/// A future is usually created, completed and observed once, and its critical sections are a
/// few instructions long; a lock of its own would cost two more allocations per future (the
/// `Lock` and its word). Sharing 64 locks keeps a future to one allocation, and two futures
/// contend only when they hash to the same stripe at the same instant. No code ever holds two
/// stripes at once (callbacks run after the lock is released), so sharing cannot deadlock.
@usableFromInline
enum LockStripes {
    @usableFromInline static let count = 64
    @usableFromInline static let locks: [Lock] = (0..<count).map { _ in Lock(name: "Future.stripe") }

    @inlinable
    static func lock(for object: AnyObject) -> Lock {
        #if BATON_MODEL_CHECK && !canImport(Darwin)
        if let lock = modelCheckLock() { return lock }
        #endif
        // Heap objects are 16-byte aligned: skip the always-zero low bits before masking.
        let address = UInt(bitPattern: ObjectIdentifier(object))
        return locks[Int((address >> 4 ^ address >> 10) & UInt(count - 1))]
    }
}
