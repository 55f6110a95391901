import Atomics
import BatonLocks

extension Future {
    /// A future of every future's value, in the order of `futures`; it fails as soon as any of
    /// them fails, and then cancels the others.
    ///
    /// ```swift
    /// let pages = Future.all(urls.map { fetcher.body(of: $0) })   // [Data], in url order
    /// ```
    ///
    /// Cancelling the returned future cancels every input. An empty array succeeds at once with
    /// `[]`. Inputs that have already completed are read in place, without a lock; when all of
    /// them have, the returned future is already complete.
    ///
    /// - Complexity: O(*n*) for *n* futures.
    @inlinable
    public static func all(_ futures: [Future<Value>]) -> Future<[Value]> {
        // The inputs that have completed, from the first on, are read in place (an atomic load
        // each, no lock): when every input has completed, `all` needs no shared state at all.
        // Their flags are checked first and their outcomes read after, by index, in a loop
        // without atomics: there the compiler borrows each future from the array instead of
        // retaining and releasing it (two atomic operations, most of the cost of the read).
        let completedCount = futures.firstIndex { !$0.isCompleted } ?? futures.count
        var values: [Value] = []
        values.reserveCapacity(futures.count)
        for index in 0..<completedCount {
            switch futures[index].outcomeAssumingCompletionSeen! {
            case .success(let value):
                values.append(value)
            case .failure(let error):
                for input in futures { input.cancel() }
                return .failed(error)
            }
        }
        if values.count == futures.count { return .succeeded(values) }

        // From the first pending input on, each input reports to a collector as it completes.
        let collector = AllCollector(futures, completedPrefix: values)
        for index in values.count..<futures.count {
            let future = futures[index]
            // A completed input is read at once: no callback to allocate and register.
            if let outcome = future.completedOutcome {
                collector.receive(index, outcome)
            } else {
                future.whenComplete { collector.receive(index, $0) }
            }
        }
        collector.result.onCancel { collector.cancelInputs() }
        return collector.result
    }
}

/// Gathers the values for ``Future/all(_:)`` in input order, and fails fast.
///
/// The values of the inputs that had completed before the first pending one arrive together, as
/// `completedPrefix`; each later input writes its own slot, so the writers need no lock between
/// them. The countdown of `remaining` (release on every decrement, acquire on the last) makes
/// every slot visible to the input that brings it to zero, which assembles the array. A failure
/// never counts down, so once one input failed the array is never assembled.
@usableFromInline
final class AllCollector<Value: Sendable> {
    @usableFromInline let inputs: [Future<Value>]
    @usableFromInline let result = Future<[Value]>()
    /// The values of `inputs[..<completedPrefix.count]`, read before any slot was written.
    @usableFromInline let completedPrefix: [Value]
    /// One slot per input from `completedPrefix.count` on, written once by that input's
    /// callback before it counts down.
    @usableFromInline let slots: UnsafeMutablePointer<Value?>
    @usableFromInline let slotCount: Int
    @usableFromInline let remaining: ManagedAtomic<Int>
    /// Claimed by the first input to fail.
    @usableFromInline let failure = Decision()

    @inlinable
    init(_ inputs: [Future<Value>], completedPrefix: [Value]) {
        precondition(completedPrefix.count < inputs.count, "AllCollector: no input left to wait for")
        self.inputs = inputs
        self.completedPrefix = completedPrefix
        slotCount = inputs.count - completedPrefix.count
        slots = .allocate(capacity: slotCount)
        slots.initialize(repeating: nil, count: slotCount)
        remaining = ManagedAtomic(slotCount)
    }

    deinit {
        slots.deinitialize(count: slotCount)
        slots.deallocate()
    }

    /// Takes the outcome of `inputs[index]`, an input after the completed prefix.
    @inlinable
    func receive(_ index: Int, _ outcome: Result<Value, any Error>) {
        switch outcome {
        case .success(let value):
            slots[index - completedPrefix.count] = value
            if remaining.wrappingDecrementThenLoad(ordering: .acquiringAndReleasing) == 0 {
                var values = completedPrefix
                values.reserveCapacity(inputs.count)
                values.append(contentsOf: UnsafeBufferPointer(start: slots, count: slotCount).lazy.map { $0! })
                result.complete(with: .success(values))
            }
        case .failure(let error):
            // Cancel the others before reporting, so whoever sees the failure sees them
            // cancelled; their cancellations come back here as failures and lose the claim.
            if failure.claim() {
                cancelInputs()
                result.complete(with: .failure(error))
            }
        }
    }

    @inlinable
    func cancelInputs() {
        for input in inputs { input.cancel() }
    }
}

// Each slot is written by one input only, and read only after the atomic countdown has
// ordered every write before the read; the other fields never change after `init`.
extension AllCollector: @unchecked Sendable {}
