import BatonInternals
import BatonLocks
import Dispatch

/// A one-shot timer that can be cancelled before it fires: the deadlines of
/// `Future.timeout(after:)`, of retries' waits, and of `Fetcher`'s requests and batches.
///
/// A timer started with ``schedule(after:_:)`` waits on the process's deadline heap
/// (`ScheduledAction`): cancelling it drops its body and takes it out of the heap at once, so a
/// deadline that is not reached (a request answered in time) leaves nothing behind. The body
/// runs on a global queue, never on the heap's own queue, which every timed wait shares.
package final class DeadlineTimer: Sendable {
    private struct State {
        var body: (@Sendable () -> Void)?
        /// Set once ``schedule(after:_:)`` has armed the timer; taken back by ``cancel()``.
        var armed: ScheduledAction?
    }

    private let state: Protected<State>

    private init(_ body: @escaping @Sendable () -> Void) {
        state = Protected(State(body: body))
    }

    /// Runs `body` on a global queue after `delay`, unless ``cancel()`` is called first.
    package static func schedule(after delay: Duration, _ body: @escaping @Sendable () -> Void) -> DeadlineTimer {
        let timer = DeadlineTimer(body)
        let armed = ScheduledAction(after: delay) {
            DispatchQueue.global().async { timer.fire() }
        }
        timer.state.write { state in
            // Kept only while the body may still run: a timer that fired already (a zero delay)
            // is out of the heap, and keeping its action would keep the timer alive through it.
            if state.body != nil { state.armed = armed }
        }
        return timer
    }

    /// A timer that runs `body` once ``start(after:on:)`` has started it and its delay has
    /// passed, unless ``cancel()`` is called first.
    package static func unstarted(_ body: @escaping @Sendable () -> Void) -> DeadlineTimer {
        DeadlineTimer(body)
    }

    /// Starts the wait on `timer`.
    package func start(after delay: Duration, on timer: RetryTimer) {
        timer.schedule(delay) { self.fire() }
    }

    private func fire() {
        let body = state.write { state in
            defer { state = State() }
            return state.body
        }
        body?()
    }

    package func cancel() {
        let armed = state.write { state in
            defer { state = State() }
            return state.armed
        }
        armed?.cancel()
    }
}
