/// A value that can only be reached while an ``AsyncLock`` is held: the state of a critical
/// section that spans `await`s, owned by its lock.
///
/// ``Protected`` does this for synchronous code; `AsyncProtected` does it for `async` code, where
/// the section may suspend while it holds the state:
///
/// ```swift
/// let session = AsyncProtected(Session())
///
/// func send(_ message: Message) async throws {
///     try await session.withLock { session in
///         if session.connection == nil {
///             session.connection = try await Connection.open()   // no one else sees nil meanwhile
///         }
///         try await session.connection!.send(message)
///         session.sent += 1
///     }
/// }
/// ```
///
/// It has every behaviour of ``AsyncLock``: FIFO, cancellation that loses nothing, no blocked
/// thread, priority donation, re-entry reported as ``AsyncLockError``, and diagnostics.
///
/// Thread safety: every method may be called from any task. `AsyncProtected` is `Sendable` when
/// `State` is `Sendable`.
///
/// - Warning: Not re-entrant: calling ``withLock(isolation:file:line:_:)`` on the same instance
///   inside its body throws ``AsyncLockError``. Do not let a reference to the state escape the
///   closure and use it later without the lock.
public final class AsyncProtected<State> {
    private let lock: AsyncLock
    /// Guarded by `lock`. The lock, not the runtime's exclusivity check, keeps accesses apart.
    @exclusivity(unchecked) private var state: State

    /// Creates a protected value.
    ///
    /// - Parameters:
    ///   - initial: The initial state.
    ///   - name: A name for ``LockDiagnostics`` reports and statistics about its lock.
    ///   - file: The creation site's file, for reports; leave the default.
    ///   - line: The creation site's line, for reports; leave the default.
    public init(_ initial: State, name: String? = nil, file: StaticString = #fileID, line: UInt = #line) {
        state = initial
        lock = AsyncLock(name: name, file: file, line: line)
    }

    /// Runs `body` with exclusive, mutable access to the state, and returns its result; `body`
    /// may suspend while it holds the state.
    ///
    /// Everything `body` does is one atomic step to every other task that uses this value.
    ///
    /// - Parameters:
    ///   - isolation: The caller's actor, inherited so that `body` runs on it; leave the default.
    ///   - file: The call site's file, for reports; leave the default.
    ///   - line: The call site's line, for reports; leave the default.
    ///   - body: Reads and changes the state.
    /// - Returns: What `body` returns.
    /// - Throws: `CancellationError` if the task is cancelled before it gets the lock;
    ///   ``AsyncLockError`` on re-entry; otherwise what `body` throws (changes made before the
    ///   throw are kept).
    public func withLock<Result>(
        isolation: isolated (any Actor)? = #isolation,
        file: StaticString = #fileID, line: UInt = #line,
        _ body: (inout State) async throws -> Result
    ) async throws -> Result {
        try await lock.withLock(isolation: isolation, file: file, line: line) { try await body(&state) }
    }
}

// Every access to `state` goes through `lock`; sharing the box shares the State value across
// tasks, so it is Sendable exactly when State is.
extension AsyncProtected: @unchecked Sendable where State: Sendable {}
