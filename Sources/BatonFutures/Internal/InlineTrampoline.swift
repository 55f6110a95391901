import BatonInternals

/// Runs inline callbacks, nesting at most ``maximumDepth`` deep on one thread, in the order they
/// were handed over.
///
/// Completing a future inline runs its callbacks, which may complete the next future, and so
/// on: a chain of 100,000 `map`s would need 100,000 nested frames. Below the depth limit a
/// callback runs at once (the usual, cheap case); beyond it the work is queued on the thread and
/// run by the outermost inline call when the nested ones have returned. Once anything is queued,
/// every later callback on the thread queues behind it, at any depth: a callback registered on
/// a completed future by a shallower frame must not overtake ones deferred before it.
@usableFromInline
enum InlineTrampoline {
    /// Deep enough for ordinary nesting, shallow enough for any thread's stack.
    @usableFromInline static let maximumDepth = 64

    @inlinable
    static func run<Argument>(_ body: @escaping @Sendable (Argument) -> Void, _ argument: Argument) {
        // The state is borrowed through closures that capture nothing: a closure capturing
        // `body` would retain it for the call and release it after (two atomic operations).
        let state = ThreadInlineState.current
        if state._withUnsafeGuaranteedRef({ $0.enter() }) {
            body(argument)
            state._withUnsafeGuaranteedRef { $0.leave() }
        } else {
            state._withUnsafeGuaranteedRef { $0.deferred.append { body(argument) } }
        }
    }

    @usableFromInline
    static func run(_ work: @escaping @Sendable () -> Void) {
        run({ (_: Void) in work() }, ())
    }
}

/// One thread's inline depth and deferred work; reached only from its own thread.
@usableFromInline
final class ThreadInlineState {
    // Unchecked exclusivity: only the owning thread touches these fields, and the dynamic
    // check on every inline callback costs more than the callback's bookkeeping.
    @exclusivity(unchecked) @usableFromInline var depth = 0
    /// Work handed over while too deep, or while earlier work waited, in that order.
    @exclusivity(unchecked) @usableFromInline var deferred: [() -> Void] = []
    /// While draining, the index of the next item of `deferred` to run: those before it have
    /// run, those from it on wait.
    @exclusivity(unchecked) @usableFromInline var nextDeferred = 0

    @usableFromInline init() {}

    /// Whether handed-over work waits to run on this thread: new inline work must queue behind
    /// it. While the last waiting item runs, nothing waits, and its callbacks may nest again.
    @inlinable var hasDeferredWork: Bool { nextDeferred < deferred.count }

    /// Takes a level of inline depth and returns `true` if work may run now; returns `false`
    /// (taking nothing) if it must be deferred: too deep, or earlier work waits.
    @inlinable
    func enter() -> Bool {
        if depth >= InlineTrampoline.maximumDepth || hasDeferredWork { return false }
        depth += 1
        return true
    }

    /// Gives back the level ``enter()`` took; the outermost level runs the deferred work.
    @inlinable
    func leave() {
        depth -= 1
        if depth == 0 && !deferred.isEmpty { drain() }
    }

    /// Runs the deferred work, and whatever that work defers, first in first out, until none
    /// is left.
    @usableFromInline
    func drain() {
        depth = 1
        while nextDeferred < deferred.count {
            let work = deferred[nextDeferred]
            nextDeferred += 1
            work()
        }
        // Keep a small buffer for the next deep chain; free a large one.
        deferred.removeAll(keepingCapacity: deferred.count <= 1024)
        nextDeferred = 0
        depth = 0
    }

    /// The calling thread's state, created on first use and released when the thread exits.
    ///
    /// Unretained: the thread-specific slot keeps the state alive while its thread runs, so
    /// callers borrow it without a retain and a release (two atomic operations on every inline
    /// callback).
    @inlinable
    static var current: Unmanaged<ThreadInlineState> {
        if let state = threadStateSlot.object(ThreadInlineState.self) { return state }
        return makeCurrent()
    }

    @usableFromInline
    static func makeCurrent() -> Unmanaged<ThreadInlineState> {
        let state = ThreadInlineState()
        threadStateSlot.setObject(state)
        return Unmanaged.passUnretained(state)
    }
}

/// The slot that holds each thread's state, released when the thread exits.
@usableFromInline
let threadStateSlot = ThreadSlot.objects()
