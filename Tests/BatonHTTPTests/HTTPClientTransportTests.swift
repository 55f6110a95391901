#if AsyncHTTPClient
import AsyncHTTPClient
import BatonFutures
import BatonLocks
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing

@testable import BatonHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What `HTTPClientTransport` promises of its own, beyond the fault tests that run over it and
/// over `URLSession` alike: requests leave as they were made, responses and errors come back as
/// `URLSession` reports them, and each completion runs exactly once.
@Suite(.timeLimit(.minutes(1))) struct HTTPClientTransportTests {
    /// Sends `request` through `transport` and returns its one result; a second one is an issue.
    func send(_ request: URLRequest, through transport: HTTPClientTransport = HTTPClientTransport(client: makeClient()))
        async throws -> URLResult
    {
        let result = Promise<URLResult>()
        _ = transport.send(request) { outcome in
            if !result.tryComplete(with: .success(outcome)) { Issue.record("a second completion: \(outcome)") }
        }
        return try await result.future.value(within: patience)
    }

    @Test func theMethodHeadersAndBodyLeaveAsMadeAndEveryHeaderComesBack() async throws {
        let server = try FaultServer.shared()
        var request = URLRequest(url: server.url("echo", uniqueKey("echo")))
        request.httpMethod = "put"
        request.setValue("hello", forHTTPHeaderField: "X-Echo")
        request.httpBody = Data("the body".utf8)
        let result = try await send(request)
        #expect(result.data.map { String(decoding: $0, as: UTF8.self) } == "PUT hello the body")
        let response = try #require(result.response as? HTTPURLResponse)
        #expect(response.statusCode == 200)
        #expect(response.url == request.url)
        #expect(response.value(forHTTPHeaderField: "x-twice") == "1, 2")
        #expect(response.value(forHTTPHeaderField: "Content-Length") == "\(result.data?.count ?? -1)")
    }

    /// A name that repeats, in any case, joins the first one's value under the first spelling;
    /// the others keep theirs. A body past the size handed over without a copy reads the same
    /// bytes as a small one.
    @Test func repeatedNamesInAnyCaseJoinUnderTheFirstSpellingAndBodiesKeepTheirBytes() throws {
        let url = try #require(URL(string: "http://127.0.0.1/h"))
        let headers = HTTPHeaders([
            ("Set-Cookie", "a=1"), ("Content-Type", "text/plain"), ("set-cookie", "b=2"), ("SET-COOKIE", "c=3"),
            ("X-One", "x"),
        ])
        for size in [0, 1_000, 1_000_000] {
            let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            let response = HTTPClient.Response(
                host: "127.0.0.1", status: .created, version: .http1_1, headers: headers,
                body: ByteBuffer(bytes: bytes))
            let result = HTTPClientTransport.result(of: response, for: url)
            let http = try #require(result.response as? HTTPURLResponse)
            #expect(http.statusCode == 201)
            #expect(http.allHeaderFields.count == 3, "\(http.allHeaderFields)")
            #expect(http.allHeaderFields["Set-Cookie"] as? String == "a=1, b=2, c=3")
            #expect(http.value(forHTTPHeaderField: "content-type") == "text/plain")
            #expect(http.value(forHTTPHeaderField: "X-One") == "x")
            #expect(result.data == Data(bytes), "a body of \(size) bytes")
        }
    }

    /// A request is sent once more only when the kept-alive connection it was given turned out
    /// closed before anything was written (`ChannelError.ioOnClosedChannel`); once, and never
    /// after a cancellation. Any other failure, a connection lost mid-request included, is the
    /// request's result.
    @Test func onlyARequestThatNeverLeftIsResentOnceAndNeverAfterACancel() {
        let neverLeft = ChannelError.ioOnClosedChannel
        #expect(HTTPClientTransport.resends(after: neverLeft, resent: false, cancelled: false))
        #expect(!HTTPClientTransport.resends(after: neverLeft, resent: true, cancelled: false), "only once")
        #expect(!HTTPClientTransport.resends(after: neverLeft, resent: false, cancelled: true), "not after a cancel")
        let others: [any Error] = [
            ChannelError.eof, ChannelError.outputClosed, ChannelError.alreadyClosed,
            HTTPClientError.remoteConnectionClosed, HTTPClientError.deadlineExceeded, HTTPClientError.cancelled,
            URLError(.networkConnectionLost),
        ]
        for error in others {
            #expect(!HTTPClientTransport.resends(after: error, resent: false, cancelled: false), "\(error)")
        }
    }

    @Test func aRefusedConnectionIsCannotConnectToHost() async throws {
        let result = try await send(URLRequest(url: refusedURL))
        let error = try #require(result.error as? URLError)
        #expect(error.code == .cannotConnectToHost)
        #expect(error.userInfo[NSUnderlyingErrorKey] != nil)
    }

    @Test func aSchemeTheClientCannotSendIsUnsupportedURLAtOnce() async throws {
        let completions = Protected(0)
        let transport = HTTPClientTransport(client: makeClient())
        let task = transport.send(URLRequest(url: URL(string: "ftp://127.0.0.1/file")!)) { result in
            #expect((result.error as? URLError)?.code == .unsupportedURL)
            completions.write { $0 += 1 }
        }
        // Refused before `send` returns, and cancelling afterwards does nothing.
        #expect(completions.value == 1)
        task.cancel()
        #expect(completions.value == 1)
    }

    @Test func aBodyStreamIsRefusedWithAClearError() async throws {
        let server = try FaultServer.shared()
        let key = uniqueKey("stream")
        var request = URLRequest(url: server.url("echo", key))
        request.httpMethod = "POST"
        request.httpBodyStream = InputStream(data: Data("streamed".utf8))
        let error = try #require(try await send(request).error as? URLError)
        #expect(error.code == .requestBodyStreamExhausted)
        #expect(error.localizedDescription.contains("httpBody"))
        #expect(server.hits(key) == 0)
    }

    @Test func aBodyOverTheLimitIsDataLengthExceedsMaximum() async throws {
        let server = try FaultServer.shared()
        let url = server.url("drip", uniqueKey("big"), "bytes=20&interval=0")
        let small = HTTPClientTransport(client: makeClient(), maximumBodySize: 19)
        #expect(
            (try await send(URLRequest(url: url), through: small).error as? URLError)?.code == .dataLengthExceedsMaximum
        )
        let enough = HTTPClientTransport(client: makeClient(), maximumBodySize: 20)
        #expect(try await send(URLRequest(url: url), through: enough).data?.count == 20)
    }

    @Test func theRequestsTimeoutIntervalEndsItAsTimedOutAndClosesTheConnection() async throws {
        let server = try FaultServer.shared()
        let key = uniqueKey("deadline")
        let request = URLRequest(url: server.url("stall", key), timeoutInterval: 1)
        #expect((try await send(request).error as? URLError)?.code == .timedOut)
        try await server.waitUntil("the connection was closed") { server.closedByClient(key) == 1 }
    }

    @Test func cancellingEndsTheRequestOnceWithCancelledAndClosesTheConnection() async throws {
        let server = try FaultServer.shared()
        let key = uniqueKey("cancel")
        let transport = HTTPClientTransport(client: makeClient())
        let result = Promise<URLResult>()
        let completions = Protected(0)
        let task = transport.send(URLRequest(url: server.url("stall", key))) { outcome in
            completions.write { $0 += 1 }
            result.tryComplete(with: .success(outcome))
        }
        try await server.waitUntil("the request is stalled") { server.answering(key) == 1 }
        task.cancel()
        task.cancel()
        #expect((try await result.future.value(within: patience).error as? URLError)?.code == .cancelled)
        try await server.waitUntil("the connection was closed") { server.closedByClient(key) == 1 }
        #expect(completions.value == 1)
    }

    @Test func deadlinesOfZeroOrLessAreNoneAndHugeOnesSaturate() {
        #expect(HTTPClientTransport.deadline(after: 0) == nil)
        #expect(HTTPClientTransport.deadline(after: -1) == nil)
        let huge = HTTPClientTransport.deadline(after: .greatestFiniteMagnitude)
        #expect(huge.map { $0 > .now() + .hours(24 * 365 * 99) } == true)
    }

    @Test func aMaximumBodySizeOutOfRangeIsAPreconditionFailureThatSaysSo() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = HTTPClientTransport(client: .shared, maximumBodySize: -1)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("maximumBodySize must be from 0 to"), "\(message)")
        #expect(message.contains("not -1"), "\(message)")
    }

    /// Each kind of failure the client reports, and the `URLError` code it becomes (`nil`: handed
    /// on as it is).
    static let failures: [(any Error & Sendable, URLError.Code?)] = [
        (HTTPClientError.cancelled, .cancelled),
        (HTTPClientError.readTimeout, .timedOut),
        (HTTPClientError.connectTimeout, .timedOut),
        (HTTPClientError.deadlineExceeded, .timedOut),
        (HTTPClientError.getConnectionFromPoolTimeout, .timedOut),
        (HTTPClientError.remoteConnectionClosed, .networkConnectionLost),
        (HTTPClientError.invalidURL, .badURL),
        (HTTPClientError.redirectLimitReached, .httpTooManyRedirects),
        (HTTPClientError.alreadyShutdown, nil),
        (ResponseAccumulator.ResponseTooBigError(maxBodySize: 1), .dataLengthExceedsMaximum),
        (ChannelError.connectTimeout(.seconds(1)), .timedOut),
        (ChannelError.ioOnClosedChannel, .networkConnectionLost),
        (ChannelError.eof, .networkConnectionLost),
        (ChannelError.alreadyClosed, nil),
        (IOError(errnoCode: ECONNREFUSED, reason: "connect"), .cannotConnectToHost),
        (IOError(errnoCode: ECONNRESET, reason: "read"), .networkConnectionLost),
        (IOError(errnoCode: EPIPE, reason: "write"), .networkConnectionLost),
        (IOError(errnoCode: ETIMEDOUT, reason: "read"), .timedOut),
        (IOError(errnoCode: EACCES, reason: "connect"), nil),
        (HTTPParserError.invalidEOFState, .networkConnectionLost),
        (HTTPParserError.invalidHeaderToken, .badServerResponse),
        (CancellationError(), nil),
    ]

    @Test(arguments: 0..<failures.count)
    func eachFailureBecomesTheURLErrorURLSessionReports(_ index: Int) {
        let (error, code) = Self.failures[index]
        let mapped = HTTPClientTransport.urlError(error)
        if let code {
            let urlError = mapped as? URLError
            #expect(urlError?.code == code, "\(error)")
            #expect(urlError?.userInfo[NSUnderlyingErrorKey] != nil, "\(error)")
        } else {
            #expect(!(mapped is URLError), "\(error)")
            #expect(String(describing: mapped) == String(describing: error))
        }
    }
}
#endif
