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
    /// The stripes' name, in lock diagnostics and statistics.
    static let name = "Future.stripe"
    @usableFromInline static let locks: [Lock] = (0..<count).map { _ in Lock(name: name) }

    /// The same locks, unretained: ``locks`` keeps them alive for the whole process, so the hot
    /// paths may use them without a retain and a release (two atomic operations) per use.
    @usableFromInline static let unretainedLocks: [Unmanaged<Lock>] = locks.map { Unmanaged.passUnretained($0) }

    /// Acquires the stripe that guards `object`, and returns it for ``Stripe/unlock()``.
    ///
    /// A lock and an unlock rather than a closure: the critical sections move callbacks into the
    /// object, which a closure's captures cannot do (they would be copied, a retain and a release).
    @inlinable
    static func lock(for object: AnyObject) -> Stripe {
        let stripe = Stripe(for: object)
        stripe.lock._withUnsafeGuaranteedRef { $0.lock() }
        return stripe
    }

    /// One of the stripes, borrowed: ``locks`` keeps it alive.
    @usableFromInline
    struct Stripe {
        @usableFromInline let lock: Unmanaged<Lock>

        @inlinable
        init(for object: AnyObject) {
            #if BATON_MODEL_CHECK && !canImport(Darwin)
            // The check's lock lives as long as the check's execution, which outlives its futures.
            if let lock = modelCheckLock() {
                self.lock = Unmanaged.passUnretained(lock)
                return
            }
            #endif
            lock = LockStripes.unretainedLocks[LockStripes.index(for: object)]
        }

        /// Releases the stripe, which the calling thread holds.
        @inlinable
        func unlock() {
            lock._withUnsafeGuaranteedRef { $0.unlock() }
        }
    }

    /// The index in ``locks`` of the stripe that guards `object`.
    @inlinable
    static func index(for object: AnyObject) -> Int {
        // Heap objects are 16-byte aligned: skip the always-zero low bits before masking.
        let address = UInt(bitPattern: ObjectIdentifier(object))
        return Int((address >> 4 ^ address >> 10) & UInt(count - 1))
    }
}
