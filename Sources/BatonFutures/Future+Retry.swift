import BatonLocks

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
        precondition(attempts >= 1, "Future.retry: attempts must be at least 1, got \(attempts)")
        let driver = RetryDriver(attempts: attempts, backoff: backoff, shouldRetry: shouldRetry, make: make)
        driver.result.onCancel { driver.stop() }
        driver.start(attempt: 1)
        return driver.result
    }
}

/// Runs the attempts of a ``Future/retry(attempts:backoff:while:_:)``.
private final class RetryDriver<Value: Sendable> {
    let result = Future<Value>()
    let attempts: Int
    let backoff: Backoff
    let shouldRetry: @Sendable (any Error) -> Bool
    let make: @Sendable () -> Future<Value>

    private enum Step {
        case attempting(Future<Value>)
        case waiting(Timer)
        case stopped
    }

    private let lock = Lock()
    /// Guarded by `lock`: what is in progress, so `stop()` can cancel it.
    private var step: Step?

    init(
        attempts: Int, backoff: Backoff, shouldRetry: @escaping @Sendable (any Error) -> Bool,
        make: @escaping @Sendable () -> Future<Value>
    ) {
        self.attempts = attempts
        self.backoff = backoff
        self.shouldRetry = shouldRetry
        self.make = make
    }

    func start(attempt: Int) {
        // Checked before `make()` too, so a stopped retry whose timer was already firing does
        // not start work only to cancel it.
        if lock.withLock({ if case .stopped = step { true } else { false } }) { return }
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
        let delay = backoff.delay(beforeRetry: attempt)
        if delay <= .zero {
            let stopped = lock.withLock { if case .stopped = step { true } else { false } }
            if !stopped { start(attempt: attempt + 1) }
            return
        }
        let timer = Timer.schedule(after: delay) { self.start(attempt: attempt + 1) }
        let stopped: Bool = lock.withLock {
            if case .stopped = step { return true }
            step = .waiting(timer)
            return false
        }
        if stopped { timer.cancel() }
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
