import BatonFutures
import BatonLocks
import Foundation
import Testing

@testable import BatonHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the docs (the Fetcher's, and "Retries and timeouts") call transient, one by one: each
/// such fault of an idempotent request is retried, and every other status, error and method is
/// tried once. The transport answers at once, so nothing here waits on a network.
@Suite(.timeLimit(.minutes(1))) struct TransientFaultTests {
    /// A transport whose first attempt of each request ends with `first`, and every later one
    /// with `200 ok`; it counts the attempts.
    final class FailsFirst: HTTPTransport {
        enum First: Sendable {
            case status(Int)
            case error(any Error & Sendable)
        }

        struct NoTask: HTTPTransportTask {
            func cancel() {}
        }

        let first: First
        private let sentCount = Protected(0)

        init(_ first: First) {
            self.first = first
        }

        var sent: Int { sentCount.value }

        func send(_ request: URLRequest, completion: @escaping @Sendable (URLResult) -> Void) -> any HTTPTransportTask {
            let attempt = sentCount.write { count in
                count += 1
                return count
            }
            let status: Int
            switch (attempt, first) {
            case (1, .error(let error)):
                completion(.error(error, nil, nil))
                return NoTask()
            case (1, .status(let code)):
                status = code
            default:
                status = 200
            }
            let response = HTTPURLResponse(
                url: request.url!, statusCode: status, httpVersion: "HTTP/1.1", headerFields: [:])!
            completion(.response(Data("status \(status)".utf8), response))
            return NoTask()
        }
    }

    static let url = URL(string: "http://127.0.0.1:9/transient")!
    /// Three attempts, no wait between them.
    static let retrying = Fetcher.RetryPolicy(attempts: 3, backoff: .none)

    /// The result of one `method` request through a fetcher over `transport`, and how many
    /// attempts reached the transport.
    static func fetch(_ transport: FailsFirst, method: String = "GET") async throws -> (URLResult, Int) {
        let fetcher = Fetcher(transport: transport, retryPolicy: retrying, requestTimeout: nil)
        var request = URLRequest(url: url)
        request.httpMethod = method
        let result = try await fetcher.result(of: request).value(within: patience)
        return (result, transport.sent)
    }

    // MARK: Statuses

    /// The statuses the docs name: 408, 429, 500, 502, 503, 504.
    static let transientStatuses = [408, 429, 500, 502, 503, 504]

    @Test(arguments: transientStatuses)
    func aTransientStatusIsRetried(_ status: Int) async throws {
        let (result, attempts) = try await Self.fetch(FailsFirst(.status(status)))
        #expect(attempts == 2)
        #expect(result.statusCode == 200)
    }

    @Test(arguments: [300, 304, 400, 401, 403, 404, 405, 409, 410, 413, 422, 425, 451, 501, 505, 507, 511, 599])
    func anyOtherStatusIsAnsweredAtOnce(_ status: Int) async throws {
        let (result, attempts) = try await Self.fetch(FailsFirst(.status(status)))
        #expect(attempts == 1)
        #expect(result.statusCode == status)
    }

    @Test func isTransientHoldsForExactlyTheDocumentedStatuses() {
        let response = HTTPURLResponse(url: Self.url, statusCode: 200, httpVersion: nil, headerFields: nil)!
        let transient = (100..<600).filter {
            HTTPStatusError(statusCode: $0, data: Data(), response: response).isTransient
        }
        #expect(transient == Self.transientStatuses)
    }

    // MARK: Errors

    /// The errors the docs name: a timeout, a lost or refused connection, no network, a failed
    /// DNS lookup.
    @Test(arguments: [
        URLError.Code.timedOut, .networkConnectionLost, .cannotConnectToHost, .notConnectedToInternet, .dnsLookupFailed,
    ])
    func aTransientURLErrorIsRetried(_ code: URLError.Code) async throws {
        let (result, attempts) = try await Self.fetch(FailsFirst(.error(URLError(code))))
        #expect(attempts == 2)
        #expect(result.statusCode == 200)
    }

    @Test func theFetchersOwnRequestTimeoutIsRetried() async throws {
        let (result, attempts) = try await Self.fetch(FailsFirst(.error(FutureError.timedOut(after: .seconds(1)))))
        #expect(attempts == 2)
        #expect(result.statusCode == 200)
    }

    @Test(arguments: [
        URLError.Code.badURL, .unsupportedURL, .cannotFindHost, .badServerResponse, .secureConnectionFailed,
        .serverCertificateUntrusted, .userAuthenticationRequired, .cannotDecodeContentData, .resourceUnavailable,
        .httpTooManyRedirects, .zeroByteResource,
    ])
    func anyOtherURLErrorEndsTheRequest(_ code: URLError.Code) async throws {
        let (result, attempts) = try await Self.fetch(FailsFirst(.error(URLError(code))))
        #expect(attempts == 1)
        #expect((result.error as? URLError)?.code == code)
    }

    @Test func anErrorOfAnotherKindEndsTheRequest() async throws {
        struct Unrelated: Error {}
        let (result, attempts) = try await Self.fetch(FailsFirst(.error(Unrelated())))
        #expect(attempts == 1)
        #expect(result.error is Unrelated)
    }

    // MARK: Methods

    /// The idempotent methods (RFC 9110 §9.2.2), in any case.
    @Test(arguments: ["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE", "put", "Delete"])
    func anIdempotentMethodIsRetried(_ method: String) async throws {
        let (result, attempts) = try await Self.fetch(FailsFirst(.status(503)), method: method)
        #expect(attempts == 2)
        #expect(result.statusCode == 200)
    }

    @Test(arguments: ["POST", "PATCH", "CONNECT", "PURGE", "post"])
    func anyOtherMethodIsSentOnce(_ method: String) async throws {
        let (result, attempts) = try await Self.fetch(FailsFirst(.status(503)), method: method)
        #expect(attempts == 1)
        #expect(result.statusCode == 503)
    }
}
