#if !canImport(Darwin)
import Atomics

#if BATON_MODEL_CHECK
/// The atomic type of the lock words. With the `ModelChecking` trait, a wrapper whose every
/// operation is a step the model checker schedules (on a watched word, on a thread it runs).
@usableFromInline typealias LockWord = _ScheduledAtomic<UInt32>
#else
/// The atomic type of the lock words: the direct atomic. (With the `ModelChecking` trait, a
/// wrapper whose every operation the model checker schedules; without it this alias is all
/// there is.)
@usableFromInline typealias LockWord = UnsafeAtomic<UInt32>
#endif
#endif
