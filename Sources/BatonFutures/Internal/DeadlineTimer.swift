import BatonInternals
import BatonLocks
import Dispatch

/// A one-shot timer on the global queue that can be cancelled before it fires: the deadlines of
/// `Future.timeout(after:)`, of retries' waits, and of `Fetcher`'s requests and batches.
///
/// A cancelled timer drops its body at once; the queue's wake-up still happens at the deadline
/// and finds nothing to do.
package final class DeadlineTimer: Sendable {
    private let body: Protected<(@Sendable () -> Void)?>

    private init(_ body: @escaping @Sendable () -> Void) {
        self.body = Protected(body)
    }

    /// Runs `body` after `delay` unless ``cancel()`` is called first.
    package static func schedule(after delay: Duration, _ body: @escaping @Sendable () -> Void) -> DeadlineTimer {
        let timer = DeadlineTimer(body)
        DispatchQueue.global().asyncAfter(deadline: .now() + delay.dispatchInterval) { timer.fire() }
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
        let body = self.body.write { body in
            defer { body = nil }
            return body
        }
        body?()
    }

    package func cancel() {
        body.write { $0 = nil }
    }
}
