extension Future {
    /// A future of `transform` applied to this future's value.
    ///
    /// A failure passes through untouched; an error thrown by `transform` fails the new future.
    /// Cancelling the new future cancels this one.
    ///
    /// - Parameters:
    ///   - executor: Where `transform` runs.
    ///   - transform: Turns the value into the new value.
    @inlinable
    public func map<NewValue: Sendable>(
        on executor: Executor = .inline, _ transform: @escaping @Sendable (Value) throws -> NewValue
    ) -> Future<NewValue> {
        let next = Future<NewValue>(cancelling: self)
        whenComplete(on: executor) { outcome in
            switch outcome {
            case .success(let value):
                do { next.complete(with: .success(try transform(value))) } catch {
                    next.complete(with: .failure(error))
                }
            case .failure(let error):
                next.complete(with: .failure(error))
            }
        }
        return next
    }

    /// A future of the future that `transform` makes from this future's value: the next step of
    /// a sequence of asynchronous operations.
    ///
    /// Cancelling the new future cancels this one, and the future `transform` made if it has
    /// been made.
    @inlinable
    public func flatMap<NewValue: Sendable>(
        on executor: Executor = .inline, _ transform: @escaping @Sendable (Value) throws -> Future<NewValue>
    ) -> Future<NewValue> {
        let next = Promise<NewValue>()
        whenComplete(on: executor) { outcome in
            switch outcome {
            case .success(let value):
                do { next.complete(with: try transform(value)) } catch { next.tryComplete(with: .failure(error)) }
            case .failure(let error):
                next.tryComplete(with: .failure(error))
            }
        }
        next.onCancel { self.cancel() }
        return next.future
    }

    /// A future that turns this future's error into a value with `transform`; a value passes
    /// through untouched, and an error thrown by `transform` fails the new future.
    ///
    /// Cancelling the new future cancels this one (the new future then reports the
    /// cancellation; `transform` does not see it).
    @inlinable
    public func recover(
        on executor: Executor = .inline, _ transform: @escaping @Sendable (any Error) throws -> Value
    ) -> Future<Value> {
        let next = Future<Value>(cancelling: self)
        whenComplete(on: executor) { outcome in
            switch outcome {
            case .success:
                next.complete(with: outcome)
            case .failure(let error):
                do { next.complete(with: .success(try transform(error))) } catch {
                    next.complete(with: .failure(error))
                }
            }
        }
        return next
    }

    /// A future that replaces this future's error with the future `transform` makes from it: a
    /// recovery that is itself asynchronous (a fallback request, a retry elsewhere). A value
    /// passes through untouched, and an error thrown by `transform` fails the new future.
    ///
    /// ```swift
    /// let avatar = fetcher.body(of: avatarURL).flatMapError { _ in fetcher.body(of: placeholderURL) }
    /// ```
    ///
    /// Cancellation passes through as for ``flatMap(on:_:)``: a `CancellationError` of this
    /// future is not handed to `transform` but fails the new future, and cancelling the new
    /// future cancels this one and the future `transform` made, if it has been made.
    @inlinable
    public func flatMapError(
        on executor: Executor = .inline, _ transform: @escaping @Sendable (any Error) throws -> Future<Value>
    ) -> Future<Value> {
        let next = Promise<Value>()
        whenComplete(on: executor) { outcome in
            guard case .failure(let error) = outcome, !(error is CancellationError), !next.future.isCompleted else {
                next.tryComplete(with: outcome)
                return
            }
            do { next.complete(with: try transform(error)) } catch { next.tryComplete(with: .failure(error)) }
        }
        next.onCancel { self.cancel() }
        return next.future
    }

    /// A future with this future's outcome, or ``FutureError/timedOut(after:)`` if it does not
    /// complete within `duration`; on the timeout this future is cancelled, stopping its work.
    ///
    /// Cancelling the new future cancels this one and the timer.
    public func timeout(after duration: Duration) -> Future<Value> {
        let next = Future<Value>()
        let decision = Decision()
        let timer = DeadlineTimer.schedule(after: duration) {
            // The source is cancelled before the timeout is reported (see `Decision`); its
            // cancellation then loses the claim below.
            guard decision.claim() else { return }
            self.cancel()
            next.complete(with: .failure(FutureError.timedOut(after: duration)))
        }
        whenComplete { outcome in
            timer.cancel()
            if decision.claim() { next.complete(with: outcome) }
        }
        next.onCancel {
            timer.cancel()
            self.cancel()
        }
        return next
    }

    /// A future with this future's outcome whose cancellation does not reach this future.
    ///
    /// Combinators pass cancellation on to their sources, which is right when a chain has one
    /// consumer. When several consumers share a future, give each its own `shared()` view:
    /// one consumer's `timeout` or `cancel()` then ends only its own wait.
    ///
    /// ```swift
    /// let config = loadConfig()                                   // shared by many
    /// let mine = config.shared().timeout(after: .seconds(1))      // times out alone
    /// ```
    public func shared() -> Future<Value> {
        let view = Future<Value>()
        whenComplete { view.complete(with: $0) }
        return view
    }

    /// This future with its value thrown away: for waiting on completion only.
    public func discardingValue() -> Future<Void> {
        map { _ in () }
    }
}
