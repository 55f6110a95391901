import BatonLocks

extension Future {
    /// A future of every future's outcome, value or error, in the order of `futures`, once all
    /// of them have completed. It never fails, and it cancels no input.
    ///
    /// ```swift
    /// let outcomes = try await Future.allSettled(urls.map { fetcher.body(of: $0) }).value
    /// let pages = outcomes.compactMap { try? $0.get() }      // whatever arrived
    /// ```
    ///
    /// Use it where ``all(_:)`` would be wrong: when every outcome matters, or when the inputs
    /// are shared with other code that must not see them cancelled. Cancelling the returned
    /// future completes it with `CancellationError` at once and leaves every input running: it
    /// owns none of them. An empty array succeeds at once with `[]`.
    ///
    /// - Complexity: O(*n*) for *n* futures.
    public static func allSettled(_ futures: [Future<Value>]) -> Future<[Result<Value, any Error>]> {
        if futures.isEmpty { return .succeeded([]) }
        let settled = Future<[Result<Value, any Error>]>()
        let outcomes = Protected(SettledOutcomes<Value>(count: futures.count))
        for (index, future) in futures.enumerated() {
            future.whenComplete { outcome in
                let all = outcomes.write { $0.store(outcome, at: index) }
                if let all { settled.complete(with: .success(all)) }
            }
        }
        return settled
    }
}

/// The outcomes of `allSettled`'s inputs as they arrive; guarded by the `Protected` holding it.
struct SettledOutcomes<Value: Sendable>: Sendable {
    private var outcomes: [Result<Value, any Error>?]
    private var remaining: Int

    init(count: Int) {
        outcomes = Array(repeating: nil, count: count)
        remaining = count
    }

    /// Records input `index`'s outcome; returns every outcome, in order, once the last arrives.
    mutating func store(_ outcome: Result<Value, any Error>, at index: Int) -> [Result<Value, any Error>]? {
        outcomes[index] = outcome
        remaining -= 1
        return remaining == 0 ? outcomes.map { $0! } : nil
    }
}
