import BatonHTTP
import BatonLocks
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if AsyncHTTPClient
import AsyncHTTPClient
#endif

/// The HTTP clients that the fault tests run over: `URLSession` always, AsyncHTTPClient's
/// `HTTPClient` with the `AsyncHTTPClient` trait.
enum TransportKind: String, CaseIterable, Codable, Sendable, CustomTestStringConvertible {
    case urlSession
    #if AsyncHTTPClient
    case asyncHTTPClient
    #endif

    var testDescription: String { rawValue }

    /// A transport for one test: a session of its own, or a client of its own (a client's pool
    /// would hand one test the kept-alive connections of another).
    func make() -> any HTTPTransport {
        switch self {
        case .urlSession: makeSession()
        #if AsyncHTTPClient
        case .asyncHTTPClient: HTTPClientTransport(client: makeClient())
        #endif
        }
    }
}

#if AsyncHTTPClient
/// The clients that tests made, kept for the life of the test process: a client must be shut
/// down before it is released, and a test that fails half-way would not shut its own down.
/// They share one event loop group, so a client costs no threads.
private let clients = Protected<[HTTPClient]>([])

/// A client of the test's own, with room for `connections` connections per host.
func makeClient(connections: Int = 16) -> HTTPClient {
    var configuration = HTTPClient.Configuration()
    configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = connections
    let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    clients.write { $0.append(client) }
    return client
}
#endif
