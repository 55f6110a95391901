#if BATON_MODEL_CHECK && !canImport(Darwin)
import Atomics

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

    // Each operation waits for the scheduler's turn (`arrive`), then runs the direct atomic with
    // the caller's ordering, then notes its result in the schedule. The methods are transparent,
    // as the direct ones are, because an ordering must be a constant where it reaches them.

    @_semantics("atomics.requires_constant_orderings") @_transparent
    public func load(ordering: AtomicLoadOrdering) -> Value {
        let thread = ModelThread.arrive(at: pointer, "load")
        let result = base.load(ordering: ordering)
        thread?.note(result)
        return result
    }

    @_semantics("atomics.requires_constant_orderings") @_transparent
    public func store(_ desired: Value, ordering: AtomicStoreOrdering) {
        _ = ModelThread.arrive(at: pointer, "store(\(desired))")
        base.store(desired, ordering: ordering)
    }

    @_semantics("atomics.requires_constant_orderings") @_transparent
    public func exchange(_ desired: Value, ordering: AtomicUpdateOrdering) -> Value {
        let thread = ModelThread.arrive(at: pointer, "exchange(\(desired))")
        let result = base.exchange(desired, ordering: ordering)
        thread?.note(result)
        return result
    }

    @_semantics("atomics.requires_constant_orderings") @_transparent
    public func compareExchange(
        expected: Value, desired: Value, ordering: AtomicUpdateOrdering
    ) -> (exchanged: Bool, original: Value) {
        let thread = ModelThread.arrive(at: pointer, "compareExchange(\(expected) → \(desired))")
        let result = base.compareExchange(expected: expected, desired: desired, ordering: ordering)
        thread?.note(result)
        return result
    }

    @_semantics("atomics.requires_constant_orderings") @_transparent
    public func compareExchange(
        expected: Value, desired: Value, successOrdering: AtomicUpdateOrdering,
        failureOrdering: AtomicLoadOrdering
    ) -> (exchanged: Bool, original: Value) {
        let thread = ModelThread.arrive(at: pointer, "compareExchange(\(expected) → \(desired))")
        let result = base.compareExchange(
            expected: expected, desired: desired, successOrdering: successOrdering,
            failureOrdering: failureOrdering)
        thread?.note(result)
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
        let thread = ModelThread.arrive(at: pointer, "loadThenWrappingDecrement(by: \(operand))")
        let result = base.loadThenWrappingDecrement(by: operand, ordering: ordering)
        thread?.note(result)
        return result
    }

    @_semantics("atomics.requires_constant_orderings") @_transparent
    public func wrappingIncrement(by operand: Value = 1, ordering: AtomicUpdateOrdering) {
        _ = ModelThread.arrive(at: pointer, "wrappingIncrement(by: \(operand))")
        base.wrappingIncrement(by: operand, ordering: ordering)
    }
}

/// A scheduled step that is not an atomic operation: a write that another thread may read
/// without the lock, keyed by a watched word. `Future` marks its outcome's write with it, so
/// that the checker can run another thread between the completion flag and the outcome.
public func _modelCheckPoint(_ word: UnsafeMutableRawPointer, _ name: @autoclosure () -> String) {
    _ = ModelThread.arrive(at: word, name())
}
#endif
