import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What ``Fetcher`` needs from an HTTP client: send one request, report its outcome once, and
/// be cancellable.
///
/// `URLSession` conforms. A server may plug in another client (for example one built on
/// SwiftNIO) with a small adapter:
///
/// ```swift
/// struct MyClientTransport: HTTPTransport {
///     let client: MyHTTPClient
///     func send(_ request: URLRequest, completion: @escaping @Sendable (URLResult) -> Void) -> any HTTPTransportTask {
///         client.execute(request) { completion(URLResult(data: $0, response: $1, error: $2)) }
///     }
/// }
/// ```
///
/// Thread safety: conforming types must allow `send` from any thread, concurrently.
public protocol HTTPTransport: Sendable {
    /// Starts `request` and calls `completion` exactly once with its outcome, on any thread,
    /// also after the returned task is cancelled (then usually with a cancellation error).
    func send(_ request: URLRequest, completion: @escaping @Sendable (URLResult) -> Void) -> any HTTPTransportTask
}

/// A request in progress that can be cancelled.
public protocol HTTPTransportTask: Sendable {
    /// Stops the request; its completion still runs once.
    func cancel()
}

extension URLSession: HTTPTransport {
    public func send(_ request: URLRequest, completion: @escaping @Sendable (URLResult) -> Void)
        -> any HTTPTransportTask
    {
        let task = dataTask(with: request) { data, response, error in
            completion(URLResult(data: data, response: response, error: error))
        }
        task.resume()
        return task
    }
}

extension URLSessionTask: HTTPTransportTask {}
