import BatonInternals
import BatonLocks
import Dispatch

extension Future {
    /// A future of the first successful attempt among up to `attempts` calls of `make`, waiting
    /// `backoff` between them.
    ///
    /// ```swift
    /// let data = Future.retry(attempts: 4, backoff: .jittered(initial: .milliseconds(100))) {
    ///     fetchOnce(url)
    /// }
    /// ```
    ///
    /// After a failed attempt, `shouldRetry` decides whether the error is worth another try (by
    /// default anything but `CancellationError`); if not, or if no attempts are left, the
    /// returned future fails with that attempt's error. Cancelling the returned future cancels
    /// the attempt in progress and stops the retries.
    ///
    /// - Parameters:
    ///   - attempts: The most attempts to make, at least 1 (1 means no retry).
    ///   - backoff: The wait before each retry.
    ///   - shouldRetry: Whether an error is transient; called on the thread that completed the
    ///     failed attempt.
    ///   - make: Starts one attempt.
    public static func retry(
        attempts: Int,
        backoff: Backoff = .none,
        while shouldRetry: @escaping @Sendable (any Error) -> Bool = { !($0 is CancellationError) },
        _ make: @escaping @Sendable () -> Future<Value>
    ) -> Future<Value> {
        retry(attempts: attempts, while: shouldRetry, delay: { retry, _ in backoff.delay(beforeRetry: retry) }, make)
    }

    /// A future of the first successful attempt among up to `attempts` calls of `make`, waiting
    /// before each retry as long as `delay` says for the failure that caused it.
    ///
    /// Use it when the failure itself says how long to wait, as an HTTP `Retry-After` does:
    ///
    /// ```swift
    /// let backoff = Backoff.exponential(initial: .milliseconds(100))
    /// let body = Future.retry(attempts: 3) { retry, error in
    ///     max(backoff.delay(beforeRetry: retry), (error as? Throttled)?.wait ?? .zero)
    /// } _: {
    ///     fetchOnce(url)
    /// }
    /// ```
    ///
    /// Otherwise it behaves as ``retry(attempts:backoff:while:_:)``.
    ///
    /// - Parameters:
    ///   - attempts: The most attempts to make, at least 1 (1 means no retry).
    ///   - shouldRetry: Whether an error is transient; called on the thread that completed the
    ///     failed attempt.
    ///   - delay: The wait before retry number `retry` (1 is the retry after the first failed
    ///     attempt), given the error of the attempt that failed; zero or less retries at once.
    ///     Called only for errors `shouldRetry` accepted, on the thread that completed the
    ///     failed attempt.
    ///   - make: Starts one attempt.
    public static func retry(
        attempts: Int,
        while shouldRetry: @escaping @Sendable (any Error) -> Bool = { !($0 is CancellationError) },
        delay: @escaping @Sendable (_ retry: Int, _ error: any Error) -> Duration,
        _ make: @escaping @Sendable () -> Future<Value>
    ) -> Future<Value> {
        precondition(attempts >= 1, "Future.retry: attempts must be at least 1, got \(attempts)")
        let driver = RetryDriver(
            attempts: attempts, shouldRetry: shouldRetry, delay: delay, timer: nil, make: make)
        return driver.run()
    }

    /// ``retry(attempts:while:delay:_:)`` whose every wait, a zero one included, runs on `timer`
    /// rather than the global queue, so that a failed attempt's completion never starts the next
    /// attempt itself, and so that tests can observe the waits without a clock.
    package static func retry(
        attempts: Int,
        while shouldRetry: @escaping @Sendable (any Error) -> Bool,
        delay: @escaping @Sendable (_ retry: Int, _ error: any Error) -> Duration,
        timer: RetryTimer,
        _ make: @escaping @Sendable () -> Future<Value>
    ) -> Future<Value> {
        precondition(attempts >= 1, "Future.retry: attempts must be at least 1, got \(attempts)")
        let driver = RetryDriver(
            attempts: attempts, shouldRetry: shouldRetry, delay: delay, timer: timer, make: make)
        return driver.run()
    }
}

/// Runs the wait before a retry: `schedule(delay, body)` runs `body` once, after `delay`, on any
/// thread, and never on the caller's stack.
package struct RetryTimer: Sendable {
    package let schedule: @Sendable (Duration, @escaping @Sendable () -> Void) -> Void

    package init(schedule: @escaping @Sendable (Duration, @escaping @Sendable () -> Void) -> Void) {
        self.schedule = schedule
    }

    /// The global Dispatch queue.
    package static let dispatch = RetryTimer { delay, body in
        DispatchQueue.global().asyncAfter(deadline: .now() + delay.dispatchInterval, execute: body)
    }
}

/// Runs the attempts of a ``Future/retry(attempts:while:delay:_:)``.
private final class RetryDriver<Value: Sendable> {
    let result = Future<Value>()
    let attempts: Int
    let shouldRetry: @Sendable (any Error) -> Bool
    let delay: @Sendable (Int, any Error) -> Duration
    /// Where the waits run; `nil`: on the global queue, and a zero wait not at all.
    let timer: RetryTimer?
    let make: @Sendable () -> Future<Value>

    private enum Step {
        case attempting(Future<Value>)
        case waiting(DeadlineTimer)
        case stopped
    }

    private let lock = Lock()
    /// Guarded by `lock`: what is in progress, so `stop()` can cancel it.
    private var step: Step?

    init(
        attempts: Int, shouldRetry: @escaping @Sendable (any Error) -> Bool,
        delay: @escaping @Sendable (Int, any Error) -> Duration, timer: RetryTimer?,
        make: @escaping @Sendable () -> Future<Value>
    ) {
        self.attempts = attempts
        self.shouldRetry = shouldRetry
        self.delay = delay
        self.timer = timer
        self.make = make
    }

    /// Starts the first attempt and returns the future of the outcome.
    func run() -> Future<Value> {
        result.onCancel { self.stop() }
        start(attempt: 1)
        return result
    }

    private var isStopped: Bool {
        lock.withLock { if case .stopped = step { true } else { false } }
    }

    private func start(attempt: Int) {
        // Checked before `make()` too, so a stopped retry whose timer was already firing does
        // not start work only to cancel it.
        if isStopped { return }
        let future = make()
        let started: Bool = lock.withLock {
            if case .stopped = step { return false }
            step = .attempting(future)
            return true
        }
        guard started else {
            future.cancel()
            return
        }
        future.whenComplete { outcome in self.finished(attempt: attempt, outcome) }
    }

    private func finished(attempt: Int, _ outcome: Result<Value, any Error>) {
        guard case .failure(let error) = outcome, attempt < attempts, shouldRetry(error) else {
            result.complete(with: outcome)
            return
        }
        let wait = delay(attempt, error)
        if timer == nil, wait <= .zero {
            if !isStopped { start(attempt: attempt + 1) }
            return
        }
        let pending = DeadlineTimer.unstarted { self.start(attempt: attempt + 1) }
        // Recorded before the wait starts: a short wait could otherwise end, and its attempt
        // start, before `step` says so, and `stop()` would then cancel the finished wait.
        let waiting: Bool = lock.withLock {
            if case .stopped = step { return false }
            step = .waiting(pending)
            return true
        }
        if waiting { pending.start(after: wait, on: timer ?? .dispatch) }
    }

    /// Stops the retries: cancels the attempt in progress or the pending wait.
    func stop() {
        let previous = lock.withLock {
            defer { step = .stopped }
            return step
        }
        switch previous {
        case .attempting(let future): future.cancel()
        case .waiting(let timer): timer.cancel()
        case .stopped, nil: break
        }
    }
}

// `step` is guarded by `lock`; the other fields never change.
extension RetryDriver: @unchecked Sendable {}
