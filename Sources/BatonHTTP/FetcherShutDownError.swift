import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request a ``Fetcher`` did not answer because it was shut down
/// (``Fetcher/shutDown(gracePeriod:clock:)``): refused, or cut off when the grace period ended.
///
/// ``Fetcher/result(of:)`` gives it as the request's `.error`; ``Fetcher/body(of:)`` fails with
/// it.
public struct FetcherShutDownError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Why the request got no answer from the server.
    public enum Reason: Hashable, Sendable {
        /// The request came after the shutdown began; nothing was sent.
        case refused
        /// The request was taken before the shutdown, but not answered within its grace period:
        /// it was withdrawn if still queued, cancelled if running.
        case gracePeriodEnded
    }

    /// The request.
    public let request: URLRequest
    /// Why it got no answer.
    public let reason: Reason

    /// An error for `request`, not answered for `reason`.
    public init(request: URLRequest, reason: Reason) {
        self.request = request
        self.reason = reason
    }

    /// The request, and what happened to it.
    public var description: String {
        let method = (request.httpMethod ?? "GET").uppercased()
        let url = request.url?.absoluteString ?? "(no URL)"
        switch reason {
        case .refused:
            return "Fetcher: \(method) \(url) was refused: the fetcher is shut down and takes no new requests"
        case .gracePeriodEnded:
            return
                "Fetcher: \(method) \(url) was cancelled: the fetcher was shut down and its grace period ended before an answer came"
        }
    }
}
