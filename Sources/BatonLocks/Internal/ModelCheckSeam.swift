#if BATON_MODEL_CHECK && !canImport(Darwin)
import Atomics

/// The one hook point of the `ModelChecking` trait: a scheduler that Baton's model checker (a
/// test-support target, never part of a product) installs, and that the lock words' atomics
/// (``_ScheduledAtomic``), the futex calls and the spin loops ask before each step.
///
/// While no check runs, the seam costs one relaxed load per step. While one runs, a step on a
/// word the check watches, taken by a thread the check runs, waits for the scheduler's turn;
/// every other step runs directly.
@_spi(ModelChecking)
public protocol ModelCheckScheduler: AnyObject, Sendable {
    /// If the calling thread runs under the check and the check watches `word`: waits for the
    /// thread's turn to take `operation` on it, and returns `true`; otherwise returns `false` at
    /// once.
    func arrive(at word: UnsafeMutableRawPointer, _ operation: @autoclosure () -> String) -> Bool
    /// Notes the result of the step the calling thread just took, for a failure's report.
    func note(_ result: String)
    /// A futex wait on `word` by the calling thread: `true` if the check took it over (parking
    /// the thread in the model), `false` if the real futex must be used.
    func futexWait(_ word: UnsafeMutableRawPointer, _ expected: UInt32) -> Bool
    /// A futex wait with a timeout on `word` by the calling thread (`Lock`'s timed acquire):
    /// `nil` if the real futex must be used; otherwise whether the wait returned because its time
    /// ran out (`true`) or otherwise (`false`: woken, or the word no longer held `expected`).
    ///
    /// It models the kernel's timer as firing at any step: while the thread is parked the
    /// scheduler may end its wait as a timeout, as a choice among the other threads' steps, so
    /// that every point at which a deadline could pass is explored. As in the kernel, a thread
    /// that a wake picked does not also time out. The time itself is not modelled: the programs
    /// give long timeouts, so that only this choice ends a wait early.
    func timedFutexWait(_ word: UnsafeMutableRawPointer, _ expected: UInt32) -> Bool?
    /// A futex wake on `word`: how many threads the check woke, or `nil` if the real futex must
    /// be used.
    func futexWake(_ word: UnsafeMutableRawPointer, _ count: Int32) -> Int32?
    /// Whether the calling thread is one the check runs (its spin loops are then cut short:
    /// every poll is a step of the schedule).
    var runsCurrentThread: Bool { get }
    /// A lock that the calling thread should use in place of the process-wide lock named
    /// `name` (a module above BatonLocks guarding its objects with shared locks), so that no
    /// thread outside the check can hold it; `nil` to use the shared one.
    func substituteLock(for name: String) -> Lock?
}

/// Where the scheduler is installed, and whether a check is running.
@_spi(ModelChecking)
public enum ModelCheckSeam {
    /// How many checks are running: while it is 0, no step consults the scheduler.
    public static let checksRunning = ManagedAtomic<Int>(0)
    static let installed = ManagedAtomicLazyReference<Installed>()

    final class Installed: Sendable {
        let scheduler: any ModelCheckScheduler
        init(_ scheduler: any ModelCheckScheduler) { self.scheduler = scheduler }
    }

    /// Installs the process's scheduler; the first installation stays (a process has one
    /// checker), and it is returned.
    @discardableResult
    public static func install(_ scheduler: any ModelCheckScheduler) -> any ModelCheckScheduler {
        installed.storeIfNilThenLoad(Installed(scheduler)).scheduler
    }

    /// The scheduler, while a check runs.
    static var active: (any ModelCheckScheduler)? {
        guard checksRunning.load(ordering: .relaxed) != 0 else { return nil }
        return installed.load()?.scheduler
    }

    /// Whether the calling thread runs under a check.
    static var runsCurrentThread: Bool { active?.runsCurrentThread ?? false }

    /// See ``ModelCheckScheduler/substituteLock(for:)``.
    public static func substituteLock(for name: String) -> Lock? {
        active?.substituteLock(for: name)
    }
}

/// An atomic whose every operation is a step the model checker schedules, when the word is
/// watched by the running check and the calling thread is one of the check's threads; on any
/// other word or thread, the direct atomic operation.
///
/// It exists only with the `ModelChecking` trait, as the lock words' type (`LockWord`) and
/// `Future`'s completion flag: public only so that inlinable code can name it.
public struct _ScheduledAtomic<Value: AtomicValue> where Value.AtomicRepresentation.Value == Value {
    @usableFromInline let pointer: UnsafeMutablePointer<Value.AtomicRepresentation>

    @inlinable public init(at pointer: UnsafeMutablePointer<Value.AtomicRepresentation>) {
        self.pointer = pointer
    }

    @usableFromInline var base: UnsafeAtomic<Value> { UnsafeAtomic(at: pointer) }

    /// Waits for the scheduler's turn if the step is scheduled; returns whether it was.
    @usableFromInline func arrive(_ operation: @autoclosure () -> String) -> Bool {
        ModelCheckSeam.active?.arrive(at: pointer, operation()) ?? false
    }

    /// Notes the result of a scheduled step.
    @usableFromInline func note(_ result: some Any) {
        ModelCheckSeam.active?.note("\(result)")
    }

    // Each operation waits for the scheduler's turn, then runs the direct atomic with the
    // caller's ordering, then notes its result in the schedule. The methods are transparent, as
    // the direct ones are, because an ordering must be a constant where it reaches them.

    @_semantics("atomics.requires_constant_orderings") @_transparent
    public func load(ordering: AtomicLoadOrdering) -> Value {
        let scheduled = arrive("load")
        let result = base.load(ordering: ordering)
        if scheduled { note(result) }
        return result
    }

    @_semantics("atomics.requires_constant_orderings") @_transparent
    public func store(_ desired: Value, ordering: AtomicStoreOrdering) {
        _ = arrive("store(\(desired))")
        base.store(desired, ordering: ordering)
    }

    @_semantics("atomics.requires_constant_orderings") @_transparent
    public func exchange(_ desired: Value, ordering: AtomicUpdateOrdering) -> Value {
        let scheduled = arrive("exchange(\(desired))")
        let result = base.exchange(desired, ordering: ordering)
        if scheduled { note(result) }
        return result
    }

    @_semantics("atomics.requires_constant_orderings") @_transparent
    public func compareExchange(
        expected: Value, desired: Value, ordering: AtomicUpdateOrdering
    ) -> (exchanged: Bool, original: Value) {
        let scheduled = arrive("compareExchange(\(expected) → \(desired))")
        let result = base.compareExchange(expected: expected, desired: desired, ordering: ordering)
        if scheduled { note(result) }
        return result
    }

    @_semantics("atomics.requires_constant_orderings") @_transparent
    public func compareExchange(
        expected: Value, desired: Value, successOrdering: AtomicUpdateOrdering,
        failureOrdering: AtomicLoadOrdering
    ) -> (exchanged: Bool, original: Value) {
        let scheduled = arrive("compareExchange(\(expected) → \(desired))")
        let result = base.compareExchange(
            expected: expected, desired: desired, successOrdering: successOrdering,
            failureOrdering: failureOrdering)
        if scheduled { note(result) }
        return result
    }

    /// The strong exchange: a spurious failure (none on x86-64) would only repeat a loop
    /// iteration, which the checker gains nothing by exploring.
    @_semantics("atomics.requires_constant_orderings") @_transparent
    public func weakCompareExchange(
        expected: Value, desired: Value, successOrdering: AtomicUpdateOrdering,
        failureOrdering: AtomicLoadOrdering
    ) -> (exchanged: Bool, original: Value) {
        compareExchange(
            expected: expected, desired: desired, successOrdering: successOrdering,
            failureOrdering: failureOrdering)
    }
}

extension _ScheduledAtomic where Value: AtomicInteger {
    @_semantics("atomics.requires_constant_orderings") @_transparent
    public func loadThenWrappingDecrement(by operand: Value = 1, ordering: AtomicUpdateOrdering) -> Value {
        let scheduled = arrive("loadThenWrappingDecrement(by: \(operand))")
        let result = base.loadThenWrappingDecrement(by: operand, ordering: ordering)
        if scheduled { note(result) }
        return result
    }

    @_semantics("atomics.requires_constant_orderings") @_transparent
    public func wrappingIncrement(by operand: Value = 1, ordering: AtomicUpdateOrdering) {
        _ = arrive("wrappingIncrement(by: \(operand))")
        base.wrappingIncrement(by: operand, ordering: ordering)
    }
}

/// A scheduled step that is not an atomic operation: a write that another thread may read
/// without the lock, keyed by a watched word. `Future` marks its outcome's write with it, so
/// that the checker can run another thread between the completion flag and the outcome.
public func _modelCheckPoint(_ word: UnsafeMutableRawPointer, _ name: @autoclosure () -> String) {
    _ = ModelCheckSeam.active?.arrive(at: word, name())
}

/// The words of each lock that a check watches, with their names for the schedule.
extension Lock {
    @_spi(ModelChecking)
    public var modelCheckWords: [(word: UnsafeMutableRawPointer, name: String)] {
        [(UnsafeMutableRawPointer(mutex.storage), "")]
    }
}

extension RecursiveLock {
    @_spi(ModelChecking)
    public var modelCheckWords: [(word: UnsafeMutableRawPointer, name: String)] {
        [(UnsafeMutableRawPointer(mutex.storage), "")]
    }
}

extension ReadWriteLock {
    @_spi(ModelChecking)
    public var modelCheckWords: [(word: UnsafeMutableRawPointer, name: String)] {
        let storage = UnsafeMutableRawPointer(rwlock.storage)
        return [
            (storage, ".state"),
            (storage + 16 * MemoryLayout<UInt32.AtomicRepresentation>.stride, ".writerNotify"),
        ]
    }
}
#endif
