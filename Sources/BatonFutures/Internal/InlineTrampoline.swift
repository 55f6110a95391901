#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

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
        let state = ThreadInlineState.current
        if state.depth >= maximumDepth || state.hasDeferredWork {
            state.deferred.append { body(argument) }
            return
        }
        state.depth += 1
        body(argument)
        state.depth -= 1
        if state.depth == 0 && !state.deferred.isEmpty { state.drain() }
    }

    @usableFromInline
    static func run(_ work: @escaping @Sendable () -> Void) {
        run({ (_: Void) in work() }, ())
    }
}

/// One thread's inline depth and deferred work; reached only from its own thread.
@usableFromInline
final class ThreadInlineState {
    @usableFromInline var depth = 0
    /// Work handed over while too deep, or while earlier work waited, in that order.
    @usableFromInline var deferred: [() -> Void] = []
    /// While draining, the index of the next item of `deferred` to run: those before it have
    /// run, those from it on wait.
    @usableFromInline var nextDeferred = 0

    @usableFromInline init() {}

    /// Whether handed-over work waits to run on this thread: new inline work must queue behind
    /// it. While the last waiting item runs, nothing waits, and its callbacks may nest again.
    @inlinable var hasDeferredWork: Bool { nextDeferred < deferred.count }

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
    @inlinable
    static var current: ThreadInlineState {
        if let pointer = pthread_getspecific(threadStateKey) {
            return Unmanaged<ThreadInlineState>.fromOpaque(pointer).takeUnretainedValue()
        }
        return makeCurrent()
    }

    @usableFromInline
    static func makeCurrent() -> ThreadInlineState {
        let state = ThreadInlineState()
        pthread_setspecific(threadStateKey, Unmanaged.passRetained(state).toOpaque())
        return state
    }
}

@usableFromInline
let threadStateKey: pthread_key_t = {
    var key = pthread_key_t()
    #if canImport(Darwin)
    let status = pthread_key_create(&key) { pointer in
        Unmanaged<ThreadInlineState>.fromOpaque(pointer).release()
    }
    #else
    let status = pthread_key_create(&key) { pointer in
        guard let pointer else { return }
        Unmanaged<ThreadInlineState>.fromOpaque(pointer).release()
    }
    #endif
    precondition(status == 0, "BatonFutures: pthread_key_create failed (\(status))")
    return key
}()
