import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response arrived, but its status is not 2xx: ``Fetcher/fetch(_:)-(URL)`` fails with this.
public struct HTTPStatusError: Error, Sendable, CustomStringConvertible {
    /// The HTTP status code, e.g. 404.
    public let statusCode: Int
    /// The response body.
    public let data: Data
    /// The response.
    public let response: URLResponse

    public init(statusCode: Int, data: Data, response: URLResponse) {
        self.statusCode = statusCode
        self.data = data
        self.response = response
    }

    /// Whether a retry may succeed: 408, 429, 500, 502, 503, 504.
    public var isTransient: Bool {
        Self.isTransient(statusCode: statusCode)
    }

    /// Whether a retry may succeed after a response with `statusCode`: see ``isTransient``.
    static func isTransient(statusCode: Int) -> Bool {
        [408, 429, 500, 502, 503, 504].contains(statusCode)
    }

    /// The status and the URL, and whether another attempt may help.
    public var description: String {
        let advice =
            isTransient
            ? "the server may recover: retry after a delay (Fetcher retries idempotent requests itself)"
            : "retrying the same request will not help: check the URL, method, headers and credentials"
        return "HTTP \(statusCode) from \(response.url?.absoluteString ?? "?"); \(advice)"
    }
}
