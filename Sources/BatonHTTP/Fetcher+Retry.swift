import BatonFutures
import BatonLocks
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Fetcher {
    /// How many times, and how far apart, transient failures are retried.
    public struct RetryPolicy: Sendable {
        /// The most attempts per request, at least 1 (1 means no retry).
        public var attempts: Int
        /// The wait before each retry.
        public var backoff: Backoff
        /// The longest wait a response's `Retry-After` can impose before a retry; a longer one is
        /// cut to this. The wait before a retry is the longer of the backoff and `Retry-After`.
        public var maximumRetryAfter: Duration

        /// Creates a policy.
        ///
        /// - Parameters:
        ///   - attempts: The most attempts per request, at least 1.
        ///   - backoff: The wait before each retry.
        ///   - maximumRetryAfter: The cap on a wait asked for by `Retry-After` (not negative);
        ///     30 seconds by default.
        public init(attempts: Int, backoff: Backoff, maximumRetryAfter: Duration = .seconds(30)) {
            precondition(attempts >= 1, "Fetcher.RetryPolicy: attempts must be at least 1")
            precondition(maximumRetryAfter >= .zero, "Fetcher.RetryPolicy: maximumRetryAfter must not be negative")
            self.attempts = attempts
            self.backoff = backoff
            self.maximumRetryAfter = maximumRetryAfter
        }

        /// Up to 3 attempts, with jittered exponential backoff from 100 ms.
        public static let standard = RetryPolicy(
            attempts: 3, backoff: .jittered(initial: .milliseconds(100), maximum: .seconds(5)))
        /// A single attempt.
        public static let none = RetryPolicy(attempts: 1, backoff: .none)
    }

    static let idempotentMethods: Set<String> = ["GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"]

    /// `request` with retries, `attempts` of them at most (more than one): transient failures
    /// are tried again. When they run out, the last response (any status) or error is the
    /// result. (A request with one attempt needs no driver: its attempt takes the answer.)
    func perform(_ request: URLRequest, method: String, attempts: Int) -> Future<URLResult> {
        let retries = FetcherStateMachine.Retries(policy: retryPolicy, idempotent: true)
        let retried = Future.retry(
            attempts: attempts, while: FetcherStateMachine.Retries.isTransient,
            delay: { retry, error in
                let delay = retries.delay(beforeRetry: retry, after: error, now: Date())
                self.lock.withLock { self.machine.counts.count(retryAfter: error) }
                self.report(.retrying(request, attempt: retry, cause: error, delay: delay))
                return delay
            },
            timer: retryTimer
        ) { self.attempt(request, method: method) }
        // The last answer is the request's result: a transient status is still a response.
        return retried.recover { error in
            // Retried while transient: a transient failure here was the last attempt's.
            if FetcherStateMachine.Retries.isTransient(error) {
                self.report(.gaveUp(request, attempts: attempts, cause: error))
            }
            if let status = error as? HTTPStatusError { return .response(status.data, status.response) }
            if error is CancellationError { throw error }
            return .error(error, nil, nil)
        }
    }
}
