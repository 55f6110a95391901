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
    ///
    /// A transfer cut short before the end of its body is reported with
    /// `URLError.networkConnectionLost` on every platform (FoundationNetworking on Linux reports
    /// a connection closed early as `URLError.unknown`).
    public init(data: Data?, response: URLResponse?, error: (any Error)?) {
        if let error {
            self = .error(Self.normalized(error), data, response)
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

    /// This result, or a `URLError.networkConnectionLost` if it is a response whose body is
    /// shorter than its `Content-Length`: a lenient client may hand such a body on as complete.
    ///
    /// No body is expected for a HEAD, a 1xx, 204 or 304; a body with a `Content-Encoding` was
    /// decoded, and its length no longer matches the header.
    func checkingLength(method: String) -> URLResult {
        guard case .response(let data, let response) = self, let http = response as? HTTPURLResponse,
            method != "HEAD", !(100..<200).contains(http.statusCode), http.statusCode != 204, http.statusCode != 304,
            (http.value(forHTTPHeaderField: "Content-Encoding") ?? "identity").lowercased() == "identity",
            let header = http.value(forHTTPHeaderField: "Content-Length"),
            let expected = Self.contentLength(header), data.count < expected
        else { return self }
        let reason = "the body ended after \(data.count) of \(expected) bytes"
        return .error(URLError(.networkConnectionLost, userInfo: [NSLocalizedDescriptionKey: reason]), data, response)
    }

    /// The value of a `Content-Length` field, which may have spaces or tabs around it. The
    /// usual field, bare digits, is read without going through Foundation's trimming.
    static func contentLength(_ field: String) -> Int? {
        Int(field) ?? Int(field.trimmingCharacters(in: .whitespaces))
    }

    /// libcurl's "transfer closed with N bytes remaining to read", which FoundationNetworking
    /// reports as `URLError.unknown`, as the lost connection it is.
    private static func normalized(_ error: any Error) -> any Error {
        let nsError = error as NSError
        guard nsError.domain == NSURLErrorDomain, nsError.code == NSURLErrorUnknown,
            let description = nsError.userInfo[NSLocalizedDescriptionKey] as? String,
            description.hasPrefix("transfer closed with")
        else { return error }
        return URLError(.networkConnectionLost, userInfo: nsError.userInfo)
    }

    /// Whether a response arrived with a 2xx status.
    public var isSuccess: Bool {
        if case .response = self, let statusCode { return (200..<300).contains(statusCode) }
        return false
    }
}
