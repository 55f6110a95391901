import BatonLocks

extension Future {
    /// A future of every future's value, in the order of `futures`; it fails as soon as any of
    /// them fails, and then cancels the others.
    ///
    /// ```swift
    /// let pages = Future.all(urls.map { fetcher.fetch($0) })   // [Data], in url order
    /// ```
    ///
    /// Cancelling the returned future cancels every input. An empty array succeeds at once with
    /// `[]`.
    ///
    /// - Complexity: O(*n*) for *n* futures.
    @inlinable
    public static func all(_ futures: [Future<Value>]) -> Future<[Value]> {
        if futures.isEmpty { return .succeeded([]) }
        let collector = AllCollector(futures)
        for (index, future) in futures.enumerated() {
            future.whenComplete { collector.receive(index, $0) }
        }
        collector.result.onCancel { collector.cancelInputs() }
        return collector.result
    }

    /// A future with the outcome of whichever future completes first, value or error; the others
    /// are then cancelled. Cancelling the returned future cancels every input.
    ///
    /// An empty array fails at once with ``FutureError/noFutures``.
    public static func race(_ futures: [Future<Value>]) -> Future<Value> {
        if futures.isEmpty { return .failed(FutureError.noFutures) }
        let winner = Future<Value>()
        for future in futures {
            future.whenComplete { outcome in
                if winner.complete(with: outcome) {
                    for other in futures where other !== future { other.cancel() }
                }
            }
        }
        winner.onCancel { for future in futures { future.cancel() } }
        return winner
    }

    /// A future with the value of whichever future succeeds first; the others are then
    /// cancelled. It fails only when every future has failed, with the error of the last to
    /// fail. Cancelling the returned future cancels every input.
    ///
    /// An empty array fails at once with ``FutureError/noFutures``.
    public static func any(_ futures: [Future<Value>]) -> Future<Value> {
        if futures.isEmpty { return .failed(FutureError.noFutures) }
        let winner = Future<Value>()
        let failuresLeft = Protected(futures.count)
        for future in futures {
            future.whenComplete { outcome in
                switch outcome {
                case .success:
                    if winner.complete(with: outcome) {
                        for other in futures where other !== future { other.cancel() }
                    }
                case .failure:
                    let last = failuresLeft.write { left in
                        left -= 1
                        return left == 0
                    }
                    if last { winner.complete(with: outcome) }
                }
            }
        }
        winner.onCancel { for future in futures { future.cancel() } }
        return winner
    }
}

/// Gathers the values for ``Future/all(_:)`` in input order, and fails fast.
@usableFromInline
final class AllCollector<Value: Sendable> {
    @usableFromInline let inputs: [Future<Value>]
    @usableFromInline let result = Future<[Value]>()
    @usableFromInline let lock = Lock()
    /// Guarded by `lock`; emptied once the result is decided.
    @usableFromInline var values: [Value?]
    /// Guarded by `lock`.
    @usableFromInline var remaining: Int

    @inlinable
    init(_ inputs: [Future<Value>]) {
        self.inputs = inputs
        values = Array(repeating: nil, count: inputs.count)
        remaining = inputs.count
    }

    @inlinable
    func receive(_ index: Int, _ outcome: Result<Value, any Error>) {
        switch outcome {
        case .success(let value):
            let complete: [Value]? = lock.withLock {
                guard remaining > 0 else { return nil }
                values[index] = value
                remaining -= 1
                guard remaining == 0 else { return nil }
                defer { values = [] }
                return values.map { $0! }
            }
            if let complete { result.complete(with: .success(complete)) }
        case .failure(let error):
            // The values gathered so far are released after the lock, so no deinit runs under it.
            let (first, gathered): (Bool, [Value?]) = lock.withLock {
                guard remaining > 0 else { return (false, []) }
                remaining = 0
                defer { values = [] }
                return (true, values)
            }
            withExtendedLifetime(gathered) {}
            if first, result.complete(with: .failure(error)) { cancelInputs() }
        }
    }

    @inlinable
    func cancelInputs() {
        for input in inputs { input.cancel() }
    }
}

// `values` and `remaining` are guarded by `lock`; the other fields never change.
extension AllCollector: @unchecked Sendable {}
