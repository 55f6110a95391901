import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a ``Fetcher`` fetches: a `URL` (a GET) or a `URLRequest` (its method, headers and body).
///
/// ```swift
/// let page = try await fetcher.body(of: url).value          // a GET
/// var upload = URLRequest(url: url)
/// upload.httpMethod = "PUT"
/// let outcome = try await fetcher.result(of: upload).value  // the same methods take a request
/// ```
///
/// One parameter type, so that each of the fetcher's methods is spelled once rather than once
/// per kind of input. A type of your own, such as an API's endpoint, can conform by building
/// its request.
public protocol Fetchable {
    // Not `urlRequest`: apps often give `URL` an extension of that name, which a public one
    // here would make ambiguous.
    /// The request a fetcher sends for this value.
    var fetchRequest: URLRequest { get }
}

extension URL: Fetchable {
    /// A GET of this URL, with the default cache policy and timeout.
    public var fetchRequest: URLRequest { URLRequest(url: self) }
}

extension URLRequest: Fetchable {
    /// This request, as it is.
    public var fetchRequest: URLRequest { self }
}
