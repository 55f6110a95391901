#if AsyncHTTPClient
import AsyncHTTPClient
import BatonLocks
import Foundation
import NIOCore
import NIOFoundationEssentialsCompat
import NIOHTTP1
import NIOPosix

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// AsyncHTTPClient's `HTTPClient` as an ``HTTPTransport``: a ``Fetcher`` over SwiftNIO, with the
/// same promises as over `URLSession`.
///
/// ```swift
/// let client = HTTPClient(eventLoopGroupProvider: .singleton)
/// let fetcher = Fetcher(transport: HTTPClientTransport(client: client), maxConcurrentRequests: 16)
/// let body = try await fetcher.body(of: url).value
/// // …
/// try await client.shutdown()
/// ```
///
/// - **Outcomes as `URLSession` reports them.** A response is an `HTTPURLResponse` with every
///   header the server sent (repeated fields joined with `, `), so the fetcher reads
///   `Retry-After` and `Content-Length` as it does over `URLSession`. Errors are `URLError`s with
///   the client's own error kept under `NSUnderlyingErrorKey`, so the fetcher retries the same
///   failures: a timeout (the client's connect, read or deadline) is `.timedOut`; a connection
///   reset, or closed before the end of a body, is `.networkConnectionLost`; a refused connection
///   is `.cannotConnectToHost`; a failed DNS lookup is `.dnsLookupFailed`; a cancellation is
///   `.cancelled`; a body over ``maximumBodySize`` is `.dataLengthExceedsMaximum`; a URL the
///   client cannot send is `.badURL` or `.unsupportedURL`. Any other error (a TLS failure, a
///   client already shut down) is handed on as the client reported it.
/// - **Timeouts.** The request's `timeoutInterval` bounds the whole request, as a deadline (the
///   fetcher's ``Fetcher/requestTimeout`` applies on top of it); the client's own connect and
///   read timeouts apply too.
/// - **Cancellation** stops the request and closes its connection; the completion still runs
///   once, with `URLError.cancelled`.
/// - **A kept-alive connection closed by the server** between two requests is not a failure: a
///   request the client found its connection closed for, before writing anything, is sent once
///   more on another connection, as `URLSession` does. A connection lost after the request was
///   written is reported (`.networkConnectionLost`); the fetcher retries it if it is idempotent.
/// - **Bodies.** A request's `httpBody` is sent as is; a request with an `httpBodyStream` is
///   refused at once (`URLError.requestBodyStreamExhausted`): read the stream into `httpBody`.
///   The response's body is collected in memory, as `URLSession` does.
/// - **Connections.** The client keeps at most
///   `configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit` (8 by default)
///   HTTP/1 connections to a host, and queues requests beyond them: make it at least the fetcher's
///   `maxConcurrentRequests`, or that bound holds inside the client and not at the fetcher.
/// - **Lifetime.** The transport does not own the client: shut the client down (`shutdown()`)
///   after the last request, as AsyncHTTPClient requires, or use `HTTPClient.shared`, which
///   lives as long as the process. A request sent through a client already shut down fails
///   with the client's `HTTPClientError.alreadyShutdown`.
///
/// The completion runs on one of the client's event loops: the fetcher does almost nothing
/// there (it completes a promise; your callbacks run on the executor you pick).
///
/// Thread safety: `send` may be called from any thread, concurrently.
public struct HTTPClientTransport: HTTPTransport {
    /// The client that sends the requests.
    public let client: HTTPClient
    /// The longest response body accepted, in bytes; a longer one ends the request with
    /// `URLError.dataLengthExceedsMaximum`.
    public let maximumBodySize: Int

    /// The most a body can hold: a `ByteBuffer` stores at most 2³² − 1 bytes.
    public static let largestBodySize = Int(exactly: UInt32.max) ?? Int.max

    /// Creates a transport over `client`.
    ///
    /// - Parameters:
    ///   - client: The client to send requests through; `HTTPClient.shared` by default. The
    ///     transport does not shut it down.
    ///   - maximumBodySize: The longest response body accepted, from 0 up to
    ///     ``largestBodySize`` (the default).
    public init(client: HTTPClient = .shared, maximumBodySize: Int = HTTPClientTransport.largestBodySize) {
        precondition(
            (0...Self.largestBodySize).contains(maximumBodySize),
            "HTTPClientTransport: maximumBodySize must be from 0 to \(Self.largestBodySize), not \(maximumBodySize)")
        self.client = client
        self.maximumBodySize = maximumBodySize
    }

    public func send(_ request: URLRequest, completion: @escaping @Sendable (URLResult) -> Void)
        -> any HTTPTransportTask
    {
        let outgoing: HTTPClient.Request
        do {
            outgoing = try Self.request(from: request)
        } catch {
            completion(.error(Self.urlError(error), nil, nil))
            return NothingSent()
        }
        let task = ClientTask()
        execute(outgoing, for: request.url, deadline: Self.deadline(after: request.timeoutInterval), as: task) {
            completion($0)
        }
        return task
    }

    /// Runs `outgoing` as `task`'s current request, once more if the connection the client picked
    /// turned out to be closed before anything was written to it.
    private func execute(
        _ outgoing: HTTPClient.Request, for url: URL?, deadline: NIODeadline?, as task: ClientTask,
        resent: Bool = false, completion: @escaping @Sendable (URLResult) -> Void
    ) {
        let running = client.execute(
            request: outgoing, delegate: ResponseAccumulator(request: outgoing, maxBodySize: maximumBodySize),
            deadline: deadline)
        task.run(running)
        running.futureResult.whenComplete { outcome in
            switch outcome {
            case .success(let response):
                completion(Self.result(of: response, for: url))
            case .failure(let error) where Self.resends(after: error, resent: resent, cancelled: task.isCancelled):
                self.execute(outgoing, for: url, deadline: deadline, as: task, resent: true, completion: completion)
            case .failure(let error):
                completion(.error(Self.urlError(error), nil, nil))
            }
        }
    }

    /// Whether a request that failed with `error` is sent once more: when the connection the
    /// client picked was a kept-alive one that the server had closed between two requests,
    /// unseen by the client (`ChannelError.ioOnClosedChannel`). The request never left, so
    /// sending it again on another connection is safe for any method (libcurl under URLSession
    /// does the same). Once: a second such failure is reported. Never for a cancelled request.
    static func resends(after error: any Error, resent: Bool, cancelled: Bool) -> Bool {
        guard !resent, !cancelled, let error = error as? ChannelError, case .ioOnClosedChannel = error else {
            return false
        }
        return true
    }

    /// The schemes AsyncHTTPClient sends requests to.
    static let supportedSchemes: Set<String> = ["http", "https", "unix", "http+unix", "https+unix"]

    // MARK: From URLRequest to HTTPClient.Request, and back

    /// The client's request for `request`: its URL, method, headers and body.
    static func request(from request: URLRequest) throws -> HTTPClient.Request {
        guard let url = request.url else { throw URLError(.badURL) }
        guard let scheme = url.scheme?.lowercased(), supportedSchemes.contains(scheme) else {
            throw URLError(
                .unsupportedURL,
                userInfo: [NSLocalizedDescriptionKey: "HTTPClientTransport cannot send a request to \(url)"])
        }
        if request.httpBodyStream != nil {
            throw URLError(
                .requestBodyStreamExhausted,
                userInfo: [
                    NSLocalizedDescriptionKey:
                        "HTTPClientTransport sends httpBody only: read the httpBodyStream into httpBody"
                ])
        }
        var headers = HTTPHeaders()
        for (name, value) in request.allHTTPHeaderFields ?? [:] { headers.add(name: name, value: value) }
        let method = HTTPMethod(rawValue: (request.httpMethod ?? "GET").uppercased())
        return try HTTPClient.Request(
            url: url, method: method, headers: headers, body: request.httpBody.map { .bytes($0) })
    }

    /// The deadline `interval` seconds from now; none for an interval of zero or less, and a
    /// century at most (a longer one would overflow the nanoseconds of `NIODeadline`).
    static func deadline(after interval: TimeInterval) -> NIODeadline? {
        guard interval > 0 else { return nil }
        let century: TimeInterval = 100 * 365 * 86_400
        return .now() + .nanoseconds(Int64(min(interval, century) * 1_000_000_000))
    }

    /// The response as `URLSession` reports one: an `HTTPURLResponse` with the body.
    static func result(of response: HTTPClient.Response, for url: URL?) -> URLResult {
        var fields: [String: String] = [:]
        // Each name's first spelling, by its lowercased form: a repeat, in any case, joins the
        // first one's value (HTTPURLResponse looks names up in any case).
        var spellings: [String: String] = [:]
        for (name, value) in response.headers {
            let folded = name.lowercased()
            if let first = spellings[folded] {
                fields[first]! += ", " + value
            } else {
                spellings[folded] = name
                fields[name] = value
            }
        }
        let version = "HTTP/\(response.version.major).\(response.version.minor)"
        guard
            let url,
            let http = HTTPURLResponse(
                url: url, statusCode: Int(response.status.code), httpVersion: version, headerFields: fields)
        else { return .error(URLError(.badServerResponse), nil, nil) }
        // A large body is handed over without a copy: the Data keeps the buffer's storage.
        let body = response.body.map { Data(buffer: $0) } ?? Data()
        return .response(body, http)
    }

    /// The `URLError` that `URLSession` reports for the same failure, with `error` under
    /// `NSUnderlyingErrorKey`; `error` itself when there is none.
    static func urlError(_ error: any Error) -> any Error {
        guard let code = urlErrorCode(error) else { return error }
        if let error = error as? URLError { return error }
        return URLError(
            code, userInfo: [NSUnderlyingErrorKey: error, NSLocalizedDescriptionKey: String(describing: error)])
    }

    private static func urlErrorCode(_ error: any Error) -> URLError.Code? {
        switch error {
        case let error as URLError:
            return error.code
        case let error as HTTPClientError:
            switch error {
            case .cancelled: return .cancelled
            case .readTimeout, .writeTimeout, .connectTimeout, .deadlineExceeded, .getConnectionFromPoolTimeout,
                .tlsHandshakeTimeout, .socksHandshakeTimeout, .httpProxyHandshakeTimeout:
                return .timedOut
            case .remoteConnectionClosed, .uncleanShutdown: return .networkConnectionLost
            case .invalidURL, .emptyHost, .emptyScheme: return .badURL
            case .redirectLimitReached, .redirectCycleDetected: return .httpTooManyRedirects
            default: return nil
            }
        case is ResponseAccumulator.ResponseTooBigError:
            return .dataLengthExceedsMaximum
        case let error as NIOConnectionError:
            // Every address failed to connect, or none was found.
            return error.connectionErrors.isEmpty && (error.dnsAError != nil || error.dnsAAAAError != nil)
                ? .dnsLookupFailed : .cannotConnectToHost
        case let error as ChannelError:
            switch error {
            case .connectTimeout: return .timedOut
            case .eof, .ioOnClosedChannel, .outputClosed, .inputClosed: return .networkConnectionLost
            default: return nil
            }
        case let error as IOError:
            switch error.errnoCode {
            case ECONNREFUSED: return .cannotConnectToHost
            case ECONNRESET, EPIPE, ECONNABORTED: return .networkConnectionLost
            case ETIMEDOUT: return .timedOut
            default: return nil
            }
        case let error as HTTPParserError:
            // The connection closed in the middle of a message; anything else is a malformed one.
            return error == .invalidEOFState ? .networkConnectionLost : .badServerResponse
        default:
            return nil
        }
    }
}

/// A request the client is running: its current attempt, which a resend replaces.
private final class ClientTask: HTTPTransportTask {
    private struct State {
        var running: HTTPClient.Task<HTTPClient.Response>?
        var isCancelled = false
    }
    private let state = Protected(State())

    var isCancelled: Bool { state.read { $0.isCancelled } }

    /// Makes `running` the current attempt; cancels it at once if the request was cancelled.
    func run(_ running: HTTPClient.Task<HTTPClient.Response>) {
        let cancelled = state.write { state in
            state.running = running
            return state.isCancelled
        }
        if cancelled { running.cancel() }
    }

    func cancel() {
        let running = state.write { state in
            state.isCancelled = true
            return state.running
        }
        running?.cancel()
    }
}

/// A request refused before it reached the client: its completion has already run.
private struct NothingSent: HTTPTransportTask {
    func cancel() {}
}
#endif
