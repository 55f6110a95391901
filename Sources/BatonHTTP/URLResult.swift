import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The outcome of one HTTP request: a response with its body, or an error with whatever
/// arrived before it.
///
/// A response with any status code (including 404 or 500) is a ``response(_:_:)``: the server
/// answered. ``error(_:_:_:)`` means no complete response arrived (no connection, a timeout, a
/// cancellation).
///
/// Thread safety: an immutable value.
public enum URLResult: Sendable {
    /// The server answered: the body and the response (an `HTTPURLResponse` for HTTP).
    case response(Data, URLResponse)
    /// No complete response: the error, and the partial body and response, if any.
    case error(any Error, Data?, URLResponse?)

    /// The outcome a `URLSession` completion handler receives, as one value.
    public init(data: Data?, response: URLResponse?, error: (any Error)?) {
        if let error {
            self = .error(error, data, response)
        } else if let response {
            self = .response(data ?? Data(), response)
        } else {
            self = .error(URLError(.badServerResponse), data, nil)
        }
    }

    /// The body: the whole body of a response, or what arrived before an error.
    public var data: Data? {
        switch self {
        case .response(let data, _): data
        case .error(_, let data, _): data
        }
    }

    /// The response, if one arrived.
    public var response: URLResponse? {
        switch self {
        case .response(_, let response): response
        case .error(_, _, let response): response
        }
    }

    /// The error, if no complete response arrived.
    public var error: (any Error)? {
        if case .error(let error, _, _) = self { return error }
        return nil
    }

    /// The HTTP status code, if an HTTP response arrived.
    public var statusCode: Int? {
        (response as? HTTPURLResponse)?.statusCode
    }

    /// Whether a response arrived with a 2xx status.
    public var isSuccess: Bool {
        if case .response = self, let statusCode { return (200..<300).contains(statusCode) }
        return false
    }
}
