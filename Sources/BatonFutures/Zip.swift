import BatonLocks

/// A future of both futures' values, once both have succeeded; it fails as soon as either
/// fails, and then cancels the other. Cancelling it cancels both.
///
/// ```swift
/// zip(fetcher.body(of: left), fetcher.body(of: right)).whenSuccess { left, right in … }
/// ```
public func zip<A: Sendable, B: Sendable>(_ a: Future<A>, _ b: Future<B>) -> Future<(A, B)> {
    let zipper = Zipper<(A?, B?), (A, B)>(slots: (nil, nil), inputs: [a.cancel, b.cancel]) { slots in
        guard let first = slots.0, let second = slots.1 else { return nil }
        return (first, second)
    }
    a.whenComplete { zipper.receive($0) { $0.0 = $1 } }
    b.whenComplete { zipper.receive($0) { $0.1 = $1 } }
    return zipper.result
}

/// A future of the three futures' values, once all have succeeded; it fails as soon as one
/// fails, and then cancels the others. Cancelling it cancels all three.
public func zip<A: Sendable, B: Sendable, C: Sendable>(
    _ a: Future<A>, _ b: Future<B>, _ c: Future<C>
) -> Future<(A, B, C)> {
    let zipper = Zipper<(A?, B?, C?), (A, B, C)>(slots: (nil, nil, nil), inputs: [a.cancel, b.cancel, c.cancel]) {
        slots in
        guard let first = slots.0, let second = slots.1, let third = slots.2 else { return nil }
        return (first, second, third)
    }
    a.whenComplete { zipper.receive($0) { $0.0 = $1 } }
    b.whenComplete { zipper.receive($0) { $0.1 = $1 } }
    c.whenComplete { zipper.receive($0) { $0.2 = $1 } }
    return zipper.result
}

/// Collects the values of a `zip` into `Slots` and completes `result` when `assemble` can build
/// the tuple, or fails it on the first error.
private final class Zipper<Slots, Output: Sendable> {
    let result = Future<Output>()
    private let lock = Lock()
    /// Guarded by `lock`.
    private var slots: Slots
    /// Guarded by `lock`.
    private var decided = false
    private let assemble: (Slots) -> Output?
    private let cancelInputs: [@Sendable () -> Void]

    init(slots: Slots, inputs: [@Sendable () -> Void], assemble: @escaping (Slots) -> Output?) {
        self.slots = slots
        self.assemble = assemble
        cancelInputs = inputs
        result.onCancel { [cancelInputs] in for cancel in cancelInputs { cancel() } }
    }

    func receive<Value>(_ outcome: Result<Value, any Error>, into store: (inout Slots, Value) -> Void) {
        switch outcome {
        case .success(let value):
            let output: Output? = lock.withLock {
                guard !decided else { return nil }
                store(&slots, value)
                guard let output = assemble(slots) else { return nil }
                decided = true
                return output
            }
            if let output { result.complete(with: .success(output)) }
        case .failure(let error):
            let first: Bool = lock.withLock {
                defer { decided = true }
                return !decided
            }
            // Cancel the others before reporting, so whoever sees the failure sees them
            // cancelled; their cancellations come back here and find the zip decided.
            if first {
                for cancel in cancelInputs { cancel() }
                result.complete(with: .failure(error))
            }
        }
    }
}

// `slots` and `decided` are guarded by `lock`; `assemble` is a pure function of its argument
// called only under `lock`; the other fields never change.
extension Zipper: @unchecked Sendable {}
