import Dispatch

/// A callback waiting for a future's result, with the executor it asked for.
@usableFromInline
struct FutureCallback<Value: Sendable>: Sendable {
    @usableFromInline let executor: Executor
    @usableFromInline let body: @Sendable (Result<Value, any Error>) -> Void

    @inlinable
    init(executor: Executor, body: @escaping @Sendable (Result<Value, any Error>) -> Void) {
        self.executor = executor
        self.body = body
    }

    /// Runs the callback with `outcome` on its executor, giving the callback up: taken from a
    /// completed future's list, its closure then needs no retain of its own for the call (and
    /// no release after), as reading `executor` and `body` from a bound copy did.
    @inlinable
    consuming func run(with outcome: Result<Value, any Error>) {
        executor.run(body, outcome)
    }
}

/// Something that can be cancelled: a future, without the closure a handler would need.
@usableFromInline
protocol CancellableFuture: AnyObject, Sendable {
    func cancel()

    /// Calls `body`, under the future's lock, with each future whose outcome this pending
    /// future adopted (``Promise/complete(with:)``); with none once it has
    /// completed. `body` must not take a lock of a future.
    func forEachAdoptedFuture(_ body: (any CancellableFuture) -> Void)
}

/// What to do when a future is cancelled: run a handler, or cancel the future it was made from
/// (the common case for combinators, stored without allocating a closure).
@usableFromInline
enum CancelAction: Sendable {
    case run(@Sendable () -> Void)
    case cancel(any CancellableFuture)
    /// Cancel the future whose outcome this one adopted. While this future is pending, it is
    /// also the edge "waits for that future" that adoption follows to find cycles.
    case adopted(any CancellableFuture)

    @inlinable
    func callAsFunction() {
        switch self {
        case .run(let handler): handler()
        case .cancel(let source), .adopted(let source): source.cancel()
        }
    }
}

/// A list that stores its first element inline: most futures have one callback, and one
/// cancellation handler at most, so most never allocate an array.
@usableFromInline
enum SmallList<Element> {
    case none
    case one(Element)
    case many([Element])

    /// Appends `element`, moving it and the elements already here: no callback's context is
    /// retained and released on the way (two atomic operations each).
    @inlinable
    mutating func append(_ element: consuming Element) {
        var current = SmallList.none
        swap(&self, &current)
        switch consume current {
        case .none: self = .one(element)
        case .one(let first): self = .many([first, element])
        case .many(var elements):
            elements.append(element)
            self = .many(elements)
        }
    }

    /// Removes the first element that `matches`; returns whether there was one.
    mutating func removeFirst(where matches: (Element) -> Bool) -> Bool {
        switch self {
        case .none:
            return false
        case .one(let element):
            guard matches(element) else { return false }
            self = .none
            return true
        case .many(var elements):
            guard let index = elements.firstIndex(where: matches) else { return false }
            self = .none  // `elements` is then the array's only reference: removing does not copy it
            elements.remove(at: index)
            self = elements.count == 1 ? .one(elements[0]) : .many(elements)
            return true
        }
    }

    var count: Int {
        switch self {
        case .none: 0
        case .one: 1
        case .many(let elements): elements.count
        }
    }

    @inlinable
    func forEach(_ body: (Element) -> Void) {
        switch self {
        case .none: break
        case .one(let element): body(element)
        case .many(let elements): for element in elements { body(element) }
        }
    }
}

/// The life of a future: pending with its callbacks and cancellation handlers, then completed
/// exactly once.
///
/// Every method is a transition made while the future's lock is held; each returns what must
/// be done after the lock is released (run callbacks, run handlers), and does none of it itself.
/// Once completed, the machine never changes again: ``Future`` then reads `outcome` and
/// `isCancelled` without the lock, after its completion flag says so.
@usableFromInline
struct FutureStateMachine<Value: Sendable> {
    @usableFromInline typealias Outcome = Result<Value, any Error>

    @usableFromInline
    enum State {
        case pending(callbacks: SmallList<FutureCallback<Value>>, cancelHandlers: SmallList<CancelAction>)
        case completed(Outcome)
    }

    @usableFromInline private(set) var state: State

    @inlinable
    init() {
        state = .pending(callbacks: .none, cancelHandlers: .none)
    }

    /// A pending future whose cancellation cancels `source`.
    @inlinable
    init(cancelling source: any CancellableFuture) {
        state = .pending(callbacks: .none, cancelHandlers: .one(.cancel(source)))
    }

    @inlinable
    init(completed outcome: Outcome) {
        state = .completed(outcome)
    }

    @inlinable
    var outcome: Outcome? {
        if case .completed(let outcome) = state { return outcome }
        return nil
    }

    @inlinable
    var isCancelled: Bool {
        if case .completed(.failure(let error)) = state { return error is CancellationError }
        return false
    }

    @usableFromInline
    enum RegisterAction {
        /// The callback will run when the future completes.
        case stored
        /// The future has completed: run the callback (handed back) now, with this outcome.
        case run(Outcome, FutureCallback<Value>)
    }

    /// Replaces the pending state with `new` and returns the old one, moved rather than copied:
    /// the callbacks and handlers it holds change hands without a retain and a release each.
    ///
    /// Only while pending: once completed, readers without the lock rely on the state never
    /// changing again.
    @inlinable
    mutating func replacePendingState(with new: consuming State) -> State {
        var old = new
        swap(&state, &old)
        return old
    }

    /// A pending state with no callbacks and no handlers.
    @inlinable
    static var empty: State { .pending(callbacks: .none, cancelHandlers: .none) }

    @inlinable
    mutating func register(_ callback: consuming FutureCallback<Value>) -> RegisterAction {
        if case .completed(let outcome) = state { return .run(outcome, callback) }
        guard case .pending(var callbacks, let cancelHandlers) = replacePendingState(with: Self.empty) else {
            preconditionFailure("unreachable: the state was pending")
        }
        callbacks.append(callback)
        state = .pending(callbacks: callbacks, cancelHandlers: cancelHandlers)
        return .stored
    }

    @usableFromInline
    enum CompleteAction {
        /// The future had already completed: this completion is ignored.
        case alreadyCompleted
        /// Run these callbacks with the outcome; run the cancellation handlers only if
        /// `runCancelHandlers` (otherwise just release them, outside the lock: releasing a
        /// closure may run a deinit, and no user code runs under the lock).
        case complete(
            SmallList<FutureCallback<Value>>, cancelHandlers: SmallList<CancelAction>, runCancelHandlers: Bool)
    }

    /// Completes the future with `outcome`; cancellation handlers are to run only when
    /// `cancelling` (otherwise there is nothing left to cancel).
    @inlinable
    mutating func complete(_ outcome: Outcome, cancelling: Bool) -> CompleteAction {
        if case .completed = state { return .alreadyCompleted }
        guard case .pending(let callbacks, let cancelHandlers) = replacePendingState(with: .completed(outcome)) else {
            preconditionFailure("unreachable: the state was pending")
        }
        return .complete(callbacks, cancelHandlers: cancelHandlers, runCancelHandlers: cancelling)
    }

    @usableFromInline
    enum CancelHandlerAction {
        /// The handler will run if the future is cancelled.
        case stored
        /// The future was already cancelled: run the handler now.
        case run
        /// The future completed otherwise: the handler will never be needed.
        case drop
    }

    /// Takes back the callback of the blocking wait on `semaphore` (a wait that timed out).
    /// Returns `false` when it is not here: the future has completed, and the callback was taken
    /// out to run.
    mutating func removeWaiter(on semaphore: DispatchSemaphore) -> Bool {
        guard case .pending = state,
            case .pending(var callbacks, let cancelHandlers) = replacePendingState(with: Self.empty)
        else { return false }
        let removed = callbacks.removeFirst { $0.executor.isWaiter(on: semaphore) }
        state = .pending(callbacks: callbacks, cancelHandlers: cancelHandlers)
        return removed
    }

    /// How many callbacks wait for the outcome (for tests).
    var callbackCount: Int {
        if case .pending(let callbacks, _) = state { return callbacks.count }
        return 0
    }

    /// Calls `body` with each future this pending future adopted; with none once completed.
    func forEachAdopted(_ body: (any CancellableFuture) -> Void) {
        guard case .pending(_, let cancelHandlers) = state else { return }
        cancelHandlers.forEach { handler in
            if case .adopted(let source) = handler { body(source) }
        }
    }

    @inlinable
    mutating func onCancel(_ handler: CancelAction) -> CancelHandlerAction {
        if case .completed = state { return isCancelled ? .run : .drop }
        guard case .pending(let callbacks, var cancelHandlers) = replacePendingState(with: Self.empty) else {
            preconditionFailure("unreachable: the state was pending")
        }
        cancelHandlers.append(handler)
        state = .pending(callbacks: callbacks, cancelHandlers: cancelHandlers)
        return .stored
    }
}
