import BatonFutures
import BatonLocks
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The attempts of one request: after a failure ``Fetcher/isTransient(_:)`` accepts, waits
/// (the backoff, or longer if the response carries `Retry-After`, capped) and tries again, up
/// to the policy's number of attempts.
///
/// An attempt's future succeeds with a final result, or fails with the error (an
/// ``HTTPStatusError`` for a transient status). Cancelling ``result`` cancels the attempt in
/// progress or the pending wait, and no attempt starts after it.
final class FetchRetry {
    private let promise = Promise<URLResult>()
    var result: Future<URLResult> { promise.future }

    private let attempts: Int
    private let policy: Fetcher.RetryPolicy
    private let timer: RetryTimer
    private let attempt: @Sendable () -> Future<URLResult>

    private enum Step {
        case attempting(Future<URLResult>)
        case waiting(DispatchWorkItemBox)
        case stopped
    }

    private let lock = Lock(name: "FetchRetry")
    /// Guarded by `lock`: what is in progress, so that a cancellation can stop it.
    private var step: Step?

    init(
        attempts: Int, policy: Fetcher.RetryPolicy, timer: RetryTimer,
        attempt: @escaping @Sendable () -> Future<URLResult>
    ) {
        self.attempts = attempts
        self.policy = policy
        self.timer = timer
        self.attempt = attempt
        promise.onCancel { self.stop() }
        start(attempt: 1)
    }

    private var isStopped: Bool {
        lock.withLock { if case .stopped = step { true } else { false } }
    }

    private func start(attempt number: Int) {
        if isStopped { return }
        let future = attempt()
        let started: Bool = lock.withLock {
            if case .stopped = step { return false }
            step = .attempting(future)
            return true
        }
        guard started else {
            future.cancel()
            return
        }
        future.whenComplete { self.finished(attempt: number, $0) }
    }

    private func finished(attempt number: Int, _ outcome: Result<URLResult, any Error>) {
        let error: any Error
        switch outcome {
        case .success(let result):
            promise.tryComplete(with: .success(result))
            return
        case .failure(let failure):
            error = failure
        }
        guard number < attempts, Fetcher.isTransient(error), !isStopped else {
            // The last answer is the request's result: a transient status is still a response.
            if let status = error as? HTTPStatusError {
                promise.tryComplete(with: .success(.response(status.data, status.response)))
            } else if error is CancellationError {
                promise.tryComplete(with: .failure(error))
            } else {
                promise.tryComplete(with: .success(.error(error, nil, nil)))
            }
            return
        }
        let wait = delay(beforeRetry: number, after: error)
        let next = DispatchWorkItemBox { self.start(attempt: number + 1) }
        let waiting: Bool = lock.withLock {
            if case .stopped = step { return false }
            step = .waiting(next)
            return true
        }
        if waiting { timer.schedule(wait) { next.run() } }
    }

    /// The backoff for retry `number`, or what the response's `Retry-After` asks for (at most
    /// the policy's cap) if that is longer.
    private func delay(beforeRetry number: Int, after error: any Error) -> Duration {
        let backoff = policy.backoff.delay(beforeRetry: number)
        guard let status = error as? HTTPStatusError, let asked = RetryAfter.delay(in: status.response) else {
            return backoff
        }
        return max(backoff, min(asked, policy.maximumRetryAfter))
    }

    private func stop() {
        let previous = lock.withLock {
            defer { step = .stopped }
            return step
        }
        switch previous {
        case .attempting(let future): future.cancel()
        case .waiting(let next): next.disarm()
        case .stopped, nil: break
        }
    }
}

// `step` is guarded by `lock`; every other stored property is immutable and Sendable.
extension FetchRetry: @unchecked Sendable {}
