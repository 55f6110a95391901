import Atomics

/// A value computed once by an `async` initializer, on first use: concurrent first readers
/// share one initialisation (single flight).
///
/// Nothing in the standard library runs an `async` initializer once for concurrent first
/// callers (a `static let` cannot await; an actor's "if nil, await, store" runs it once per
/// caller that arrives during the await). `AsyncLazy` does:
///
/// ```swift
/// final class Assistant: Sendable {
///     private let model = AsyncLazy { try await Model.load(from: modelURL) }
///
///     func answer(_ question: String) async throws -> String {
///         try await model.value.answer(question)     // loads once, however many ask at once
///     }
/// }
/// ```
///
/// - **Single flight.** The first reader runs the initializer in its own task; readers that
///   arrive meanwhile wait (suspended, without blocking a thread) and all get its value.
/// - **Failures are retried.** If the initializer throws, the readers that waited for that
///   attempt get the error, and the next read runs the initializer again.
/// - **Cancellation.** A waiting reader that is cancelled leaves at once with
///   `CancellationError`, without disturbing the others. If the reader running the initializer
///   is cancelled and the initializer throws, the waiters do not see that failure: the first of
///   them runs the initializer again.
/// - **Priority donation.** A waiting reader of higher priority raises the task running the
///   initializer to its priority (where the runtime offers
///   `UnsafeCurrentTask.escalatePriority(to:)`).
/// - **Free after that.** Once the value is there, a read is one acquiring load and takes no
///   lock.
///
/// Thread safety: ``value`` may be read from any task. The state is guarded by a Baton futex lock
/// held for a few instructions, never across the initializer; continuations are resumed after it
/// is released.
///
/// - Warning: Reading ``value`` from inside the initializer, in the task running it, stops the
///   program with a message naming this `AsyncLazy` instead of waiting for itself forever. A
///   child task of the initializer that reads it waits for the initializer, which deadlocks if
///   the initializer awaits that child.
public final class AsyncLazy<Value: Sendable> {
    /// Set (releasing) once `storage` holds the value; never cleared.
    @usableFromInline let ready: UnsafeAtomic<Bool>
    /// Written once, under `mutex`, before `ready` is set; read only after `ready` is seen.
    @exclusivity(unchecked) @usableFromInline var storage: Value?
    /// Guards `machine` and the write of `storage`.
    let mutex = PlatformMutex()
    /// Guarded by `mutex`. The mutex, not the runtime's exclusivity check, keeps accesses apart.
    @exclusivity(unchecked) private var machine = AsyncLazyStateMachine<Value>()
    /// This and the properties below never change after init; they need no lock.
    private let make: @Sendable () async throws -> Value
    private let name: String?
    private let file: StaticString
    private let line: UInt

    /// Creates a lazy value; `make` runs on the first read of ``value``.
    ///
    /// - Parameters:
    ///   - name: A name for the message if the value is read from inside its own initializer.
    ///   - file: The creation site's file, for that message; leave the default.
    ///   - line: The creation site's line, for that message; leave the default.
    ///   - make: Computes the value, in the task of the reader that runs it. Runs once if it
    ///     succeeds; after a failure, again on a later read.
    public init(
        name: String? = nil, file: StaticString = #fileID, line: UInt = #line,
        _ make: @escaping @Sendable () async throws -> Value
    ) {
        ready = .create(false)
        self.make = make
        self.name = name
        self.file = file
        self.line = line
    }

    deinit {
        ready.destroy()
        mutex.deallocate()
    }

    #if compiler(>=6.2)
    /// The value, computed by the initializer on the first read.
    ///
    /// The first reader runs the initializer in its task; readers arriving meanwhile wait for it.
    /// Once it has succeeded, reads return at once without suspending, on the caller's executor
    /// (no hop: a read of a ready value costs one acquiring load).
    ///
    /// - Throws: What the initializer threw, to the reader that ran it and the readers that
    ///   waited for that attempt; `CancellationError` to a reader cancelled before the value is
    ///   there.
    @inlinable
    nonisolated(nonsending) public var value: Value {
        get async throws {
            if _fastPath(ready.load(ordering: .acquiring)) { return storage.unsafelyUnwrapped }
            return try await initialize()
        }
    }
    #else
    /// The value, computed by the initializer on the first read.
    ///
    /// The first reader runs the initializer in its task; readers arriving meanwhile wait for it.
    /// Once it has succeeded, reads return at once without suspending.
    ///
    /// - Throws: What the initializer threw, to the reader that ran it and the readers that
    ///   waited for that attempt; `CancellationError` to a reader cancelled before the value is
    ///   there.
    @inlinable
    public var value: Value {
        get async throws {
            if _fastPath(ready.load(ordering: .acquiring)) { return storage.unsafelyUnwrapped }
            return try await initialize()
        }
    }
    #endif

    /// Whether the value has been computed.
    public var isInitialized: Bool { ready.load(ordering: .acquiring) }

    @usableFromInline
    func initialize() async throws -> Value {
        if Task.isCancelled { throw CancellationError() }
        let me = withUnsafeCurrentTask { $0! }  // `value` is async, so it always runs in a task
        mutex.lock()
        let read = machine.read(me)
        mutex.unlock()
        switch read {
        case .done(let value):
            return value
        case .lead:
            return try await lead()
        case .reentered:
            let named = name.map { " \"\($0)\"" } ?? ""
            fatalError(
                "AsyncLazy<\(Value.self)>\(named) (created at \(SourceSite(file, line))): value read from inside "
                    + "its own initializer, in the task running it; this would wait for itself forever.")
        case .wait(let id):
            switch await suspend(me, id: id) {
            case .value(let value): return value
            case .failure(let error): throw error
            case .cancelled: throw CancellationError()
            case .lead:
                if Task.isCancelled {
                    // Chosen to run the initializer as this task was being cancelled: pass the
                    // turn on.
                    hand(failureOf: true)
                    throw CancellationError()
                }
                return try await lead()
            }
        }
    }

    /// Runs the initializer in the calling task and hands its outcome to the waiters.
    private func lead() async throws -> Value {
        do {
            let value = try await make()
            mutex.lock()
            storage = value
            ready.store(true, ordering: .releasing)
            let waiters = machine.succeed(value)
            mutex.unlock()
            for waiter in waiters { waiter.resume() }
            return value
        } catch {
            hand(failureOf: Task.isCancelled, error: error)
            throw error
        }
    }

    /// Ends a failed attempt: the waiters get `error`, or, if the leader was cancelled, the first
    /// of them runs the initializer again.
    private func hand(failureOf leaderCancelled: Bool, error: any Error = CancellationError()) {
        mutex.lock()
        let waiters = machine.fail(error, leaderCancelled: leaderCancelled)
        mutex.unlock()
        for waiter in waiters { waiter.resume() }
    }

    private func suspend(_ me: UnsafeCurrentTask, id: UInt64) async -> AsyncLazyStateMachine<Value>.Outcome {
        await suspendAsWaiter(isolation: nil) { continuation in
            switch machine.enqueue(continuation, task: me, id: id, cancelled: Task.isCancelled) {
            case .resumeNow(let now):
                return now
            case .wait(let leader):
                // Under the mutex: the leader is alive until it reports the outcome.
                _ = donate(me.priority, to: leader)
                return nil
            }
        } cancel: {
            machine.cancel(id: id)
        } takeOutcome: {
            machine.takeOutcome(id: id)
        }
    }

    /// The readers waiting now (for tests; it may change as soon as it is read).
    var waitingCount: Int {
        mutex.lock()
        defer { mutex.unlock() }
        return machine.waitingCount
    }
}

extension AsyncLazy: WaiterOwner {}

// `mutex` guards `machine` and the one write of `storage`, which `ready` publishes (releasing)
// to the readers that see it set (acquiring); the other stored properties never change.
extension AsyncLazy: @unchecked Sendable {}
