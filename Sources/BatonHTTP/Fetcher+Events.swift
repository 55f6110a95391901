import BatonLocks
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Fetcher {
    /// What a fetcher reports of its requests' retries, to the handler given to
    /// ``setEventHandler(_:)``: each retry, and each request whose last attempt failed.
    public enum Event: Sendable, CustomStringConvertible {
        /// Attempt `attempt` (from 1) of `request` failed with a transient fault, `cause` (an
        /// ``HTTPStatusError`` for a status, or the transport's error); the request is sent
        /// again after `delay` (the backoff, or the response's `Retry-After` if longer).
        case retrying(URLRequest, attempt: Int, cause: any Error, delay: Duration)
        /// The last of `attempts` attempts of `request` failed with a transient fault, `cause`:
        /// its retries ran out (or its method is not idempotent, and it had one), and that
        /// failure is its result.
        case gaveUp(URLRequest, attempts: Int, cause: any Error)

        /// The request the event is about.
        public var request: URLRequest {
            switch self {
            case .retrying(let request, _, _, _), .gaveUp(let request, _, _): request
            }
        }

        /// The fault that caused the retry or ended the request.
        public var cause: any Error {
            switch self {
            case .retrying(_, _, let cause, _), .gaveUp(_, _, let cause): cause
            }
        }

        /// One line naming the request, the attempt and the cause.
        public var description: String {
            let method = (request.httpMethod ?? "GET").uppercased()
            let url = request.url?.absoluteString ?? "(no URL)"
            switch self {
            case .retrying(_, let attempt, let cause, let delay):
                return "Fetcher: \(method) \(url) failed on attempt \(attempt) (\(cause)); retrying in \(delay)"
            case .gaveUp(_, let attempts, let cause):
                let tries = attempts == 1 ? "1 attempt" : "\(attempts) attempts"
                return "Fetcher: \(method) \(url) failed after \(tries) (\(cause)); giving up"
            }
        }
    }

    /// Sets the function that receives the fetcher's events (``Event``), replacing the one set
    /// before; `nil` stops them.
    ///
    /// ```swift
    /// fetcher.setEventHandler { event in print(event) }
    /// ```
    ///
    /// The handler runs where the fetcher decides: for a retry, before the wait; for a request
    /// that gives up, before its caller sees the result. It must return quickly and must not
    /// wait for this fetcher's requests. A fetcher with no handler builds no event.
    public func setEventHandler(_ handler: (@Sendable (Event) -> Void)?) {
        eventHandler.write { $0 = handler }
    }

    /// Sends `event` to the handler, if one is set; the event is built only then.
    func report(_ event: @autoclosure () -> Event) {
        guard let handler = eventHandler.value else { return }
        handler(event())
    }
}
