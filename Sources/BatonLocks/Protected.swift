/// A value that can only be reached while a lock is held: the thread-safe class pattern in one
/// type.
///
/// The classic way to make a class thread-safe is a private serial queue or lock and a naming
/// convention ("only touch `_state` on the queue"). `Protected` makes the compiler enforce it:
/// the state is reachable only inside ``read(file:line:_:)`` (shared with other readers) and
/// ``write(file:line:_:)`` (exclusive), so no access can forget the lock. A composed action — swap two
/// fields, take a value and replace it — is one `write`, and so atomic.
///
/// A class with several properties becomes thread-safe without changing its public interface
/// by moving its stored properties into one `State` struct:
///
/// ```swift
/// final class Warrior: Sendable {
///     private struct Hands {
///         var left: String?
///         var right: String?
///     }
///     private let hands = Protected(Hands())
///
///     var leftHand: String? {
///         get { hands.read { $0.left } }
///         set { hands.write { $0.left = newValue } }
///     }
///     var rightHand: String? {
///         get { hands.read { $0.right } }
///         set { hands.write { $0.right = newValue } }
///     }
///
///     /// Atomic: no thread ever sees one hand swapped and the other not.
///     func swapHands() {
///         hands.write { swap(&$0.left, &$0.right) }
///     }
///
///     /// Puts `item` in the right hand, moves the right hand's item to the left, and returns
///     /// what the left hand dropped — all as one atomic step.
///     func juggle(_ item: String) -> String? {
///         hands.write { hands in
///             let dropped = hands.left
///             hands.left = hands.right
///             hands.right = item
///             return dropped
///         }
///     }
/// }
/// ```
///
/// The lock is a ``ReadWriteLock``: writer-preferring, so frequent reads never starve a write.
///
/// Thread safety: every method may be called from any thread. `Protected` is `Sendable` when
/// `State` is `Sendable`.
///
/// - Warning: Do not call `read` or `write` on the same `Protected` inside a `read` or `write`
///   body: the lock is not re-entrant and the call deadlocks. Do not let a reference to the
///   state escape the closure (for example a class instance stored inside it) and use it later
///   without the lock.
public final class Protected<State> {
    @usableFromInline let lock: ReadWriteLock
    /// Guarded by `lock`. The lock, not the runtime's exclusivity check, keeps accesses apart.
    @exclusivity(unchecked) @usableFromInline var state: State

    /// Creates a protected value.
    ///
    /// - Parameters:
    ///   - initial: The initial state.
    ///   - name: A name for ``LockDiagnostics`` reports and statistics about its lock.
    ///   - file: The creation site's file, for diagnostics reports; leave the default.
    ///   - line: The creation site's line, for diagnostics reports; leave the default.
    public init(_ initial: State, name: String? = nil, file: StaticString = #fileID, line: UInt = #line) {
        state = initial
        lock = ReadWriteLock(name: name, file: file, line: line)
    }

    /// Runs `body` with shared read access to the state, and returns its result.
    ///
    /// Other readers may run at the same time; writers wait.
    ///
    /// - Parameters:
    ///   - file: The call site's file, for diagnostics reports; leave the default.
    ///   - line: The call site's line, for diagnostics reports; leave the default.
    ///   - body: Reads the state.
    /// - Returns: What `body` returns (usually a value derived from the state).
    /// - Throws: What `body` throws.
    /// - Warning: Not re-entrant: calling `read` or `write` on this instance inside `body`
    ///   deadlocks when a writer is waiting.
    @inlinable
    public func read<Result, Failure: Error>(
        file: StaticString = #fileID, line: UInt = #line,
        _ body: (borrowing State) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try lock.withReadLock(file: file, line: line) { () throws(Failure) -> Result in try body(state) }
    }

    /// Runs `body` with exclusive, mutable access to the state, and returns its result.
    ///
    /// Everything `body` does is one atomic step to every other thread.
    ///
    /// - Parameters:
    ///   - file: The call site's file, for diagnostics reports; leave the default.
    ///   - line: The call site's line, for diagnostics reports; leave the default.
    ///   - body: Reads and changes the state.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws; changes made before the throw are kept.
    /// - Warning: Not re-entrant: calling `read` or `write` on this instance inside `body`
    ///   deadlocks.
    @inlinable
    public func write<Result, Failure: Error>(
        file: StaticString = #fileID, line: UInt = #line,
        _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try lock.withWriteLock(file: file, line: line) { () throws(Failure) -> Result in try body(&state) }
    }

    /// A copy of the current state, taken under the read lock.
    ///
    /// Two reads of `value` are two separate snapshots: to act on the state consistently, do
    /// the whole action inside one ``read(file:line:_:)`` or ``write(file:line:_:)``.
    @inlinable
    public var value: State {
        lock.withReadLock { state }
    }
}

// Every access to `state` goes through `lock`; sharing the box shares the State value across
// threads, so it is Sendable exactly when State is.
extension Protected: @unchecked Sendable where State: Sendable {}
