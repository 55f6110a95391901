import BatonFutures
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Earlier spellings, kept until the next major release so that code written against them builds
// with a warning that names the new spelling (the changelog lists each). Each forwards to
// `body(of:)`, `result(of:)` or `results(of:timeout:)`; an `async` one to the same method's
// future, awaited (see the rationale at `// MARK: Public API` in Fetcher.swift).
extension Fetcher {
    // MARK: Deprecated in 1.1: one method per job

    /// Fetches the body of `url` with a GET.
    @available(*, deprecated, renamed: "body(of:)")
    public func fetch(_ url: URL) -> Future<Data> {
        body(of: url)
    }

    /// Fetches the body for `request`.
    @available(*, deprecated, renamed: "body(of:)")
    public func fetch(_ request: URLRequest) -> Future<Data> {
        body(of: request)
    }

    /// Fetches `url` with a GET; the future always succeeds with the response or the error.
    @available(*, deprecated, renamed: "result(of:)")
    public func fetchResult(_ url: URL) -> Future<URLResult> {
        result(of: url)
    }

    /// Sends `request`; the future always succeeds with the response or the error.
    @available(*, deprecated, renamed: "result(of:)")
    public func fetchResult(_ request: URLRequest) -> Future<URLResult> {
        result(of: request)
    }

    /// Fetches every URL and returns one result per URL, in order.
    @available(*, deprecated, renamed: "results(of:timeout:)")
    public func fetchResults(_ urls: [URL], timeout: Duration? = nil) -> Future<[URLResult]> {
        results(of: urls, timeout: timeout)
    }

    /// The body of `url`, fetched with a GET.
    @available(
        *, deprecated,
        message: "use `try await body(of: url).value`; cancelling the awaiting task still cancels the request"
    )
    public func data(from url: URL) async throws -> Data {
        try await body(of: url).value
    }

    /// The body for `request`.
    @available(
        *, deprecated,
        message: "use `try await body(of: request).value`; cancelling the awaiting task still cancels the request"
    )
    public func data(for request: URLRequest) async throws -> Data {
        try await body(of: request).value
    }

    /// The response (any status) or the error for `url`, fetched with a GET.
    @available(
        *, deprecated,
        message: "use `try await result(of: url).value`; cancelling the awaiting task still cancels the request"
    )
    public func result(from url: URL) async throws -> URLResult {
        try await result(of: url).value
    }

    /// The results for `urls`, in order.
    @available(
        *, deprecated,
        message:
            "use `try await results(of: urls, timeout: timeout).value`; cancelling the awaiting task still cancels the requests"
    )
    public func results(from urls: [URL], timeout: Duration? = nil) async throws -> [URLResult] {
        try await results(of: urls, timeout: timeout).value
    }

    // MARK: Deprecated in 1.0: the spellings before 1.0

    /// Fetches `url` with a GET; the future always succeeds with the response or the error.
    @available(*, deprecated, renamed: "result(of:)")
    public func result(for url: URL) -> Future<URLResult> {
        result(of: url)
    }

    /// Sends `request`; the future always succeeds with the response or the error.
    @available(*, deprecated, renamed: "result(of:)")
    public func result(for request: URLRequest) -> Future<URLResult> {
        result(of: request)
    }

    /// Fetches every URL and returns one result per URL, in order.
    @available(*, deprecated, renamed: "results(of:timeout:)")
    public func fetchAll(_ urls: [URL], timeout: Duration? = nil) -> Future<[URLResult]> {
        results(of: urls, timeout: timeout)
    }

    /// The results for `urls`, in order.
    @available(
        *, deprecated,
        message:
            "use `try await results(of: urls, timeout: timeout).value`; cancelling the awaiting task still cancels the requests"
    )
    public func results(for urls: [URL], timeout: Duration? = nil) async throws -> [URLResult] {
        try await results(of: urls, timeout: timeout).value
    }
}
