import Foundation

/// Runs the wait before a retry: `schedule(delay, body)` runs `body` once, after `delay`, on any
/// thread. A ``Fetcher`` uses Dispatch; tests put in one that records the delays asked for.
struct RetryTimer: Sendable {
    let schedule: @Sendable (Duration, @escaping @Sendable () -> Void) -> Void

    static let dispatch = RetryTimer { delay, body in
        DispatchQueue.global().asyncAfter(deadline: .now() + delay.timeInterval, execute: body)
    }
}
