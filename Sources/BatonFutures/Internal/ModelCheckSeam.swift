import Atomics

#if BATON_MODEL_CHECK && !canImport(Darwin)
@_spi(ModelChecking) import BatonLocks

/// The completion flag's atomic type. With the `ModelChecking` trait, a wrapper whose every
/// operation is a step the model checker schedules.
@usableFromInline typealias CompletionAtomic = _ScheduledAtomic<Int>

/// The lock a future uses instead of its stripe under a check that substitutes one.
@usableFromInline func modelCheckLock() -> Lock? {
    ModelCheckSeam.substituteLock(for: LockStripes.name)
}

extension Future {
    /// The completion flag's word, for a check to watch; the outcome's write is a step on it too.
    @_spi(ModelChecking)
    public var modelCheckWord: UnsafeMutableRawPointer { flagAddress }

    /// The name of the process-wide locks that a check substitutes with a lock of its own.
    @_spi(ModelChecking)
    public static var modelCheckLockName: String { LockStripes.name }
}
#else
/// The completion flag's atomic type: the direct atomic. (With the `ModelChecking` trait, a
/// wrapper that the model checker schedules.)
@usableFromInline typealias CompletionAtomic = UnsafeAtomic<Int>
#endif
