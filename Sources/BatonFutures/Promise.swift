import BatonLocks
/// The writing end of a ``Future``: completes it exactly once.
///
/// ```swift
/// let promise = Promise<Int>()
/// promise.future.whenSuccess { print($0) }
/// promise.succeed(42)
/// ```
///
/// The first completion wins. A later ``succeed(_:file:line:)``, ``fail(_:file:line:)`` or
/// ``complete(with:file:line:)`` is ignored; in debug builds it is also reported through
/// ``FutureDiagnostics/duplicateCompletionHandler`` (by default a line on standard error), since
/// it usually means two code paths each believe they own the result. It never traps. When
/// several completers race on purpose, use ``tryComplete(with:)``, which reports nothing and
/// says whether it won.
///
/// Thread safety: a promise may be copied and completed from any thread; completions race
/// safely.
public struct Promise<Value: Sendable>: Sendable {
    /// The future this promise completes.
    public let future: Future<Value>

    /// Creates a promise and its pending future.
    @inlinable
    public init() {
        future = Future()
    }

    @inlinable
    init(future: Future<Value>) {
        self.future = future
    }

    /// Completes the future with `value`.
    @inlinable
    public func succeed(_ value: Value, file: StaticString = #fileID, line: UInt = #line) {
        complete(with: .success(value), file: file, line: line)
    }

    /// Completes the future with `error`.
    @inlinable
    public func fail(_ error: any Error, file: StaticString = #fileID, line: UInt = #line) {
        complete(with: .failure(error), file: file, line: line)
    }

    /// Completes the future with `result`. If the future has already completed, this is ignored
    /// (and reported in debug builds).
    @inlinable
    public func complete(with result: Result<Value, any Error>, file: StaticString = #fileID, line: UInt = #line) {
        if !future.complete(with: result) {
            #if DEBUG
            if !future.isCancelled {
                FutureDiagnostics.reportDuplicateCompletion(
                    FutureDiagnostics.DuplicateCompletion(
                        valueType: String(describing: Value.self), file: "\(file)", line: line))
            }
            #endif
        }
    }

    /// Completes the future with the outcome of `other`, when it completes. Cancelling this
    /// promise's future cancels `other`.
    ///
    /// **Cycles.** If `other` is this promise's future, or waits for it through futures that
    /// adopted others in turn (A adopts B's future, B adopts C's, C adopts A's), none of them
    /// could ever complete. This call then fails this promise's future at once with
    /// ``FutureError/adoptionCycle``, and every future on the cycle, having adopted the next,
    /// fails with the same error; once they have, nothing keeps them alive. Of two calls racing
    /// to close a cycle from two threads, exactly one finds it. ``Future/flatMap(on:_:)`` and
    /// ``Future/flatMapError(on:_:)`` adopt the future their transform returns, so they report
    /// such a cycle the same way. Only adoptions are followed: a cycle that passes through a
    /// future made by ``Future/map(on:_:)`` or another combinator is not found.
    ///
    /// - Complexity: O(1) when `other` has completed; otherwise O(*n*) in the futures that
    ///   `other` waits for through adoption, checked under one lock shared by all adoptions.
    public func complete(with other: Future<Value>) {
        // A completed future waits for nothing: no cycle can pass through it.
        if other.isCompleted {
            other.whenComplete { future.complete(with: $0) }
            return
        }
        var closesCycle = false
        var cancelOtherNow = false
        AdoptionCycles.lock.withLock {
            if !future.isCompleted && AdoptionCycles.reachesLocked(future, from: other) {
                closesCycle = true
            } else {
                cancelOtherNow = future.storeCancelAction(.adopted(other))
            }
        }
        if closesCycle {
            // The futures on the cycle adopted each other in turn: each fails as the one it
            // adopted does.
            future.complete(with: .failure(FutureError.adoptionCycle))
            return
        }
        if cancelOtherNow { other.cancel() }
        other.whenComplete { future.complete(with: $0) }
    }

    /// Completes the future with `result` if it is still pending.
    ///
    /// - Returns: `true` if this call completed the future, `false` if it had already completed.
    @inlinable @discardableResult
    public func tryComplete(with result: Result<Value, any Error>) -> Bool {
        future.complete(with: result)
    }

    /// Cancels the future with `result` as its outcome, if it is still pending: the cancellation
    /// handlers run as for ``Future/cancel()`` and stop the work, but the future's observers see
    /// `result` (the reason the work was stopped, a shutdown's say) instead of
    /// `CancellationError`. The future does not count as cancelled (``isCancelled``), so
    /// register every handler that must run before it can be cancelled this way.
    ///
    /// - Returns: `true` if this call completed the future, `false` if it had already completed.
    @inlinable @discardableResult
    package func cancel(answering result: Result<Value, any Error>) -> Bool {
        future.complete(with: result, cancelling: true)
    }

    /// Registers `handler` to run if the future is cancelled: stop the work there.
    ///
    /// It runs at once if the future has already been cancelled, and never if the future
    /// completed otherwise. Handlers run outside any lock, on the thread that cancels.
    @inlinable
    public func onCancel(_ handler: @escaping @Sendable () -> Void) {
        future.onCancel(handler)
    }

    /// Whether the future has been cancelled: long work can poll it and stop early.
    @inlinable
    public var isCancelled: Bool { future.isCancelled }
}

extension Promise where Value == Void {
    /// Completes a `Future<Void>`.
    public func succeed(file: StaticString = #fileID, line: UInt = #line) {
        succeed((), file: file, line: line)
    }
}
