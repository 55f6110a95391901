import Atomics
import BatonInternals
import BatonLocks
import Dispatch

/// A value that will be available later, or an error: the result of work that is running now.
///
/// A future completes exactly once, with a value or an error, through its ``Promise``. Callbacks
/// registered with ``whenComplete(on:_:)`` before or after completion all run, once each, on the
/// ``Executor`` they asked for, and never while a lock of the future is held (a callback may
/// call back into the same future). Combinators build new futures from old ones: ``map(on:_:)``,
/// ``flatMap(on:_:)``, ``recover(on:_:)``, ``timeout(after:)``, ``all(_:)``, ``race(_:)``,
/// ``any(_:)``, ``retry(attempts:backoff:while:_:)`` and ``zip(_:_:)``.
///
/// ```swift
/// let profile = Future<Profile> { promise in
///     api.loadProfile { result in promise.complete(with: result) }
/// }
/// let avatar = Future { try await api.avatar() }           // from an async body
/// zip(profile, avatar)
///     .timeout(after: .seconds(5))
///     .whenComplete(on: .queue(.main)) { result in show(result) }
/// ```
///
/// **Cancellation.** ``cancel()`` completes a pending future with `CancellationError` and runs
/// the cancellation handlers registered on its promise (``Promise/onCancel(_:)``), which stop the
/// work: a `URLSessionTask`, the `Task` of an async body, a timer. A future made by a combinator
/// passes its cancellation on to the futures it was made from, so cancelling the end of a chain
/// stops the work at its start; ``all(_:)`` and ``zip(_:_:)`` cancel the remaining inputs as
/// soon as one fails. Cancelling a future that has completed does nothing.
///
/// **Inline callbacks.** With the default ``Executor/inline`` a callback runs on the thread that
/// completes the future. Deep chains of inline futures (a `map` of a `map` of …) do not recurse
/// without bound: beyond a fixed depth the remaining callbacks run once the current callback
/// returns. Callbacks of one future run in the order they were registered, at any depth: a
/// callback registered on a completed future runs after every inline callback that the thread
/// deferred before it.
///
/// Thread safety: every method may be called from any thread, concurrently. Whatever the
/// completing thread wrote before it completed the future is visible to every callback and to
/// every reader that sees the future complete. Reading a completed future (``result``,
/// ``isCompleted``, ``whenComplete(on:_:)``, ``all(_:)`` over completed inputs) takes no lock.
///
/// - Warning: Cancelling a derived future cancels its sources. If a source is shared with other
///   observers, they see the cancellation too: give each consumer its own source.
public final class Future<Value: Sendable> {
    /// 0 while the future is pending, 1 once `machine` holds its outcome; reached only through
    /// ``completedFlag`` (atomically), never as a Swift property after `init`.
    ///
    /// It must stay the first stored property: ``completedFlag`` finds it at the start of the
    /// object's stored properties, which keeps the flag inside the future's one allocation.
    @usableFromInline var completedWord: Int.AtomicRepresentation

    /// Written only under the lock stripe of this object (``LockStripes``), and only while the
    /// future is pending. Once ``completedFlag`` reads 1 (acquiring) it never changes again, so
    /// it may then be read without the lock.
    @exclusivity(unchecked) @usableFromInline var machine: FutureStateMachine<Value>

    /// Creates a pending future; its ``Promise`` completes it.
    @inlinable
    init() {
        completedWord = Int.AtomicRepresentation(0)
        machine = FutureStateMachine()
        assertFlagLayout()
    }

    /// Creates a pending future whose cancellation cancels `source`.
    @inlinable
    init(cancelling source: any CancellableFuture) {
        completedWord = Int.AtomicRepresentation(0)
        machine = FutureStateMachine(cancelling: source)
        assertFlagLayout()
    }

    /// Creates a completed future.
    @inlinable
    init(outcome: Result<Value, any Error>) {
        completedWord = Int.AtomicRepresentation(1)
        machine = FutureStateMachine(completed: outcome)
        assertFlagLayout()
    }

    /// The completion flag, in place in this object: a second allocation per future (a
    /// `ManagedAtomic`) would cost more than the lock it saves. The same technique as
    /// `ManagedAtomic` itself.
    @inlinable
    var completedFlag: CompletionAtomic {
        CompletionAtomic(at: flagAddress.assumingMemoryBound(to: Int.AtomicRepresentation.self))
    }

    /// Where ``completedFlag`` lives: the start of the object's stored properties.
    @inlinable
    var flagAddress: UnsafeMutableRawPointer { _getUnsafePointerToStoredProperties(self) }

    /// Checks, in debug builds, that ``completedFlag`` addresses `completedWord`.
    @inlinable
    func assertFlagLayout() {
        assert(
            withUnsafeMutablePointer(to: &completedWord) { UnsafeMutableRawPointer($0) }
                == _getUnsafePointerToStoredProperties(self),
            "BatonFutures: completedWord must be the first stored property of Future")
    }

    /// The outcome if the future has completed, read without a lock: after the flag's acquiring
    /// load, `machine` holds the outcome and is never written again.
    @inlinable
    var completedOutcome: Result<Value, any Error>? {
        guard isCompleted else { return nil }
        return outcomeAssumingCompletionSeen
    }

    /// The outcome, read without the flag: only for a thread that has already seen
    /// ``isCompleted`` return `true` (that acquiring load orders this read after the outcome's
    /// last write).
    ///
    /// Over many futures, checking every flag first and reading the outcomes after lets the
    /// compiler borrow each future from its array instead of retaining it across the atomic load.
    @inlinable
    var outcomeAssumingCompletionSeen: Result<Value, any Error>? {
        machine.outcome
    }

    /// Creates a future and runs `body` at once, on the calling thread, with the promise that
    /// completes it.
    ///
    /// `body` usually starts asynchronous work and completes the promise from its callback. If
    /// `body` throws, the future fails with that error (unless `body` completed it already).
    ///
    /// ```swift
    /// let data = Future<Data> { promise in
    ///     let task = session.dataTask(with: url) { data, _, error in
    ///         if let data { promise.succeed(data) } else { promise.fail(error!) }
    ///     }
    ///     promise.onCancel { task.cancel() }
    ///     task.resume()
    /// }
    /// ```
    @inlinable
    public convenience init(_ body: (Promise<Value>) throws -> Void) {
        self.init()
        let promise = Promise(future: self)
        do {
            try body(promise)
        } catch {
            promise.tryComplete(with: .failure(error))
        }
    }

    /// Creates a future that runs `operation` in a new `Task` and completes with its result.
    ///
    /// ``cancel()`` cancels the task: `operation` sees `Task.isCancelled` and its cancellable
    /// awaits throw `CancellationError`. The future completes with `CancellationError` at once,
    /// whatever the operation does after.
    ///
    /// - Parameters:
    ///   - priority: The priority of the task.
    ///   - operation: The work; its value or thrown error completes the future.
    public convenience init(
        priority: TaskPriority? = nil, _ operation: @escaping @Sendable () async throws -> Value
    ) {
        self.init()
        let promise = Promise(future: self)
        let task = Task(priority: priority) {
            do {
                promise.tryComplete(with: .success(try await operation()))
            } catch {
                promise.tryComplete(with: .failure(error))
            }
        }
        promise.onCancel { task.cancel() }
    }

    /// A future that has already succeeded with `value`.
    @inlinable
    public static func succeeded(_ value: Value) -> Future<Value> {
        Future(outcome: .success(value))
    }

    /// A future that has already failed with `error`.
    @inlinable
    public static func failed(_ error: any Error) -> Future<Value> {
        Future(outcome: .failure(error))
    }

    /// Registers `body` to run once with the future's result, on `executor`.
    ///
    /// If the future has already completed, `body` is scheduled at once. Inline, it runs before
    /// this method returns — unless this thread is inside deeply nested inline callbacks and has
    /// deferred some: then `body` runs after those, when the outermost inline callback returns,
    /// so that callbacks keep their registration order.
    ///
    /// - Parameters:
    ///   - executor: Where `body` runs; ``Executor/inline`` by default.
    ///   - body: Receives the value or the error.
    @inlinable
    public func whenComplete(
        on executor: Executor = .inline, _ body: consuming @escaping @Sendable (Result<Value, any Error>) -> Void
    ) {
        if let outcome = completedOutcome {
            executor.run(body, outcome)
            return
        }
        register(FutureCallback(executor: executor, body: body))
    }

    /// Stores `callback` to run on completion, or runs it now if the future has just completed.
    ///
    /// The callback is moved into the state machine, not copied: locking without a closure
    /// (the transition cannot throw) lets it change hands without a retain and a release.
    /// Always inlined: as a call, `baton bench futures` measured create + observe + resolve
    /// about 5% slower (0.52× NIO's time against 0.49×, three runs each).
    @inlinable @inline(__always)
    func register(_ callback: consuming FutureCallback<Value>) {
        let stripe = LockStripes.lock(for: self)
        let action = machine.register(callback)
        stripe.unlock()
        if case .run(let outcome, let callback) = action {
            callback.run(with: outcome)
        }
    }

    /// Registers `body` to run with the value if the future succeeds.
    @inlinable
    public func whenSuccess(on executor: Executor = .inline, _ body: @escaping @Sendable (Value) -> Void) {
        whenComplete(on: executor) { if case .success(let value) = $0 { body(value) } }
    }

    /// Registers `body` to run with the error if the future fails (or is cancelled).
    @inlinable
    public func whenFailure(on executor: Executor = .inline, _ body: @escaping @Sendable (any Error) -> Void) {
        whenComplete(on: executor) { if case .failure(let error) = $0 { body(error) } }
    }

    /// The result, or `nil` while the future is pending.
    ///
    /// Reading it takes no lock: it is one atomic load, and a copy of the outcome once there is
    /// one.
    @inlinable
    public var result: Result<Value, any Error>? {
        completedOutcome
    }

    /// Whether the future has completed.
    @inlinable
    public var isCompleted: Bool { completedFlag.load(ordering: .acquiring) != 0 }

    /// Whether the future was cancelled (completed with `CancellationError` by ``cancel()``).
    @inlinable
    public var isCancelled: Bool {
        completedFlag.load(ordering: .acquiring) != 0 && machine.isCancelled
    }

    /// Cancels the future if it is still pending: it completes with `CancellationError`, and
    /// the cancellation handlers registered on its promise run, stopping the work.
    ///
    /// Does nothing if the future has completed.
    @inlinable
    public func cancel() {
        complete(with: .failure(CancellationError()), cancelling: true)
    }

    /// Completes the future unless it has completed; returns whether this call completed it.
    @inlinable @discardableResult
    func complete(with outcome: Result<Value, any Error>, cancelling: Bool = false) -> Bool {
        if completedFlag.load(ordering: .acquiring) != 0 { return false }
        let stripe = LockStripes.lock(for: self)
        #if BATON_MODEL_CHECK && !canImport(Darwin)
        // A step of its own, so that the checker can run a reader between the two writes.
        _modelCheckPoint(flagAddress, "write the outcome")
        #endif
        let action = machine.complete(outcome, cancelling: cancelling)
        // Releasing: whoever reads the flag set also sees the outcome written just before.
        if case .complete = action { completedFlag.store(1, ordering: .releasing) }
        stripe.unlock()
        switch consume action {
        case .alreadyCompleted:
            return false
        case .complete(let callbacks, let cancelHandlers, let runCancelHandlers):
            if runCancelHandlers { cancelHandlers.forEach { $0() } }
            // Consumed, not iterated: each callback leaves the list as it runs, and its
            // context is released once, after its call.
            switch consume callbacks {
            case .none: break
            case .one(let callback): callback.run(with: outcome)
            case .many(let list): for callback in list { callback.run(with: outcome) }
            }
            return true
        }
    }

    /// Registers a handler that runs if the future is cancelled (see ``Promise/onCancel(_:)``).
    @inlinable
    func onCancel(_ handler: @escaping @Sendable () -> Void) {
        let stripe = LockStripes.lock(for: self)
        let action = machine.onCancel(.run(handler))
        stripe.unlock()
        if case .run = action { handler() }
    }

    /// Stores `handler` to run if the future is cancelled, and returns whether the caller must
    /// run it now (the future was cancelled already) instead.
    func storeCancelAction(_ handler: CancelAction) -> Bool {
        let stripe = LockStripes.lock(for: self)
        let action = machine.onCancel(handler)
        stripe.unlock()
        if case .run = action { return true }
        return false
    }

    @usableFromInline
    func forEachAdoptedFuture(_ body: (any CancellableFuture) -> Void) {
        let stripe = LockStripes.lock(for: self)
        machine.forEachAdopted(body)
        stripe.unlock()
    }

    /// The value, once the future completes; throws its error.
    ///
    /// Honours task cancellation: if the awaiting task is cancelled, the future is cancelled
    /// (stopping its work) and this throws `CancellationError`, unless the future completed
    /// first.
    @inlinable
    public var value: Value {
        get async throws {
            if let outcome = result { return try outcome.get() }
            return try await withTaskCancellationHandler {
                try await withUnsafeThrowingContinuation { continuation in
                    whenComplete { continuation.resume(with: $0) }
                }
            } onCancel: {
                cancel()
            }
        }
    }

    /// Blocks the calling thread until the future completes, and returns its value.
    ///
    /// - Throws: The future's error.
    /// - Warning: Never call it from the thread that must complete the future (for example an
    ///   inline callback of the same chain, or a serial queue the work is waiting for): it
    ///   deadlocks.
    @available(*, noasync, message: "wait() blocks the thread; use `try await future.value`", renamed: "value")
    public func wait() throws -> Value {
        if let outcome = result { return try outcome.get() }
        let done = DispatchSemaphore(value: 0)
        whenComplete { _ in done.signal() }
        done.wait()
        return try result!.get()
    }

    /// Blocks the calling thread until the future completes or `timeout` passes.
    ///
    /// A wait that times out takes the callback it registered back out of the future, so that
    /// waiting and giving up, however often, leaves nothing behind on a future that stays
    /// pending. A future that completes just as the time runs out returns its outcome: the call
    /// throws ``FutureError/timedOut(after:)`` only if the future was still pending when it gave
    /// up. A zero or negative `timeout` returns the outcome of a completed future, and throws
    /// the timeout at once for a pending one.
    ///
    /// - Throws: The future's error, or ``FutureError/timedOut(after:)`` if it is still pending
    ///   after `timeout` (the future itself is left alone).
    @available(*, noasync, message: "wait(timeout:) blocks the thread; use `try await future.timeout(after:).value`")
    public func wait(timeout: Duration) throws -> Value {
        if let outcome = result { return try outcome.get() }
        let done = DispatchSemaphore(value: 0)
        register(FutureCallback(executor: .inlineWaiter(done)) { _ in done.signal() })
        if done.wait(timeout: .now() + timeout.dispatchInterval) == .success { return try result!.get() }
        // Out of time. If the callback is still registered, the future is pending: take it back.
        // If it is gone, completing the future took it (under the same lock, after the outcome
        // was published), and the outcome is there to return.
        let stripe = LockStripes.lock(for: self)
        let pending = machine.removeWaiter(on: done)
        stripe.unlock()
        if pending { throw FutureError.timedOut(after: timeout) }
        return try result!.get()
    }

    /// How many callbacks wait for the outcome (for tests).
    var callbackCount: Int {
        let stripe = LockStripes.lock(for: self)
        defer { stripe.unlock() }
        return machine.callbackCount
    }
}

// `machine` is written only under the object's lock stripe, and read without it only after the
// completion flag's acquiring load has seen the release that followed its last write.
extension Future: @unchecked Sendable {}

extension Future: CancellableFuture {}
