import BatonFutures
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The spellings before 1.0, kept for one release so that code written against them builds with
// a warning that names the new spelling (the changelog lists each rename).
extension Fetcher {
    /// Fetches `url` with a GET; the future always succeeds with the response or the error.
    @available(*, deprecated, renamed: "fetchResult(_:)")
    public func result(for url: URL) -> Future<URLResult> {
        fetchResult(url)
    }

    /// Sends `request`; the future always succeeds with the response or the error.
    @available(*, deprecated, renamed: "fetchResult(_:)")
    public func result(for request: URLRequest) -> Future<URLResult> {
        fetchResult(request)
    }

    /// Fetches every URL and returns one result per URL, in order.
    @available(*, deprecated, renamed: "fetchResults(_:timeout:)")
    public func fetchAll(_ urls: [URL], timeout: Duration? = nil) -> Future<[URLResult]> {
        fetchResults(urls, timeout: timeout)
    }

    /// The results for `urls`, in order.
    @available(*, deprecated, renamed: "results(from:timeout:)")
    public func results(for urls: [URL], timeout: Duration? = nil) async throws -> [URLResult] {
        try await results(from: urls, timeout: timeout)
    }
}
