import Atomics

#if BATON_MODEL_CHECK && !canImport(Darwin)
@_spi(ModelChecking) import BatonLocks

/// The completion flag's atomic type. With the `ModelChecking` trait, a wrapper whose every
/// operation is a step the model checker schedules.
@usableFromInline typealias CompletionAtomic = _ScheduledAtomic<Int>

/// The lock a future uses instead of its stripe under a check that asked for one.
@usableFromInline func modelCheckLock() -> Lock? {
    modelCheckFutureLock()
}

/// Whether a check seeded the bug of setting the completion flag before the outcome.
@usableFromInline func modelCheckPublishesEarly() -> Bool {
    modelCheckSeeded(.futurePublishesEarly)
}

extension ModelProgram {
    /// Schedules the steps on this future's completion flag and outcome, and makes the
    /// execution's futures use ``futureLock()`` instead of their shared lock stripe.
    @_spi(ModelChecking)
    public mutating func watch<Value>(_ future: Future<Value>, as name: String = "future") {
        watch(word: future.flagAddress, as: "\(name).completed")
        _ = futureLock()
    }
}
#else
/// The completion flag's atomic type: the direct atomic. (With the `ModelChecking` trait, a
/// wrapper that the model checker schedules.)
@usableFromInline typealias CompletionAtomic = UnsafeAtomic<Int>
#endif
