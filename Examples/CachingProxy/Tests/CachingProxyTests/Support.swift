import AsyncHTTPClient
import BatonLocks
import CachingProxy
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import Prometheus
import ServiceLifecycle
import Testing

/// The upstream the tests' proxy fetches from, on 127.0.0.1, served by Hummingbird:
///
/// - `/body/<key>?size=N&cc=…`: 200 with N bytes (10 by default) and the `Cache-Control` given;
/// - `/status/<code>/<key>?cc=…`: that status, with the `Cache-Control` given;
/// - `/redirect/<key>?to=URL`: 302 to `URL`;
/// - `/held/<key>`: answers 200 once the test opens ``gate`` for it.
///
/// It counts the requests it gets by path (`hits`), and the most it was serving at once.
final class Upstream: Sendable {
    let port: Int
    /// Opened once per `/held` request the test lets through.
    let gate: AsyncSemaphore
    private let counts: Protected<Counts>
    private let group: ServiceGroup
    private let running: Task<Void, any Error>

    typealias Counts = (hits: [String: Int], serving: Int, mostServing: Int)

    private init(
        port: Int, gate: AsyncSemaphore, counts: Protected<Counts>, group: ServiceGroup,
        running: Task<Void, any Error>
    ) {
        self.port = port
        self.gate = gate
        self.counts = counts
        self.group = group
        self.running = running
    }

    static func start() async throws -> Upstream {
        let counts = Protected<Counts>(([:], 0, 0))
        let gate = AsyncSemaphore(value: 0)
        let router = Router()
        router.middlewares.add(Counting(counts: counts))
        router.get("body/:key") { request, _ -> Response in
            let size = request.uri.queryParameters["size"].flatMap { Int($0) } ?? 10
            var headers: HTTPFields = [.contentType: "application/octet-stream"]
            if let cacheControl = request.uri.queryParameters["cc"] { headers[.cacheControl] = String(cacheControl) }
            return Response(
                status: .ok, headers: headers,
                body: ResponseBody(byteBuffer: ByteBuffer(repeating: UInt8(ascii: "b"), count: size)))
        }
        router.get("status/:code/:key") { request, context -> Response in
            let code = try context.parameters.require("code", as: Int.self)
            var headers = HTTPFields()
            if let cacheControl = request.uri.queryParameters["cc"] { headers[.cacheControl] = String(cacheControl) }
            return Response(
                status: HTTPResponse.Status(code: code), headers: headers,
                body: ResponseBody(byteBuffer: ByteBuffer(string: "status \(code)")))
        }
        router.get("redirect/:key") { request, _ -> Response in
            Response.redirect(to: String(request.uri.queryParameters["to"] ?? "/"), type: .found)
        }
        router.get("held/:key") { _, _ -> String in
            try await gate.wait()
            return "released"
        }
        let (port, reportPort) = AsyncStream.makeStream(of: Int.self)
        let application = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                reportPort.yield(channel.localAddress?.port ?? 0)
                reportPort.finish()
            }, logger: Logger(label: "upstream"))
        let group = ServiceGroup(services: [application], logger: Logger(label: "upstream"))
        let running = Task { try await group.run() }
        var ports = port.makeAsyncIterator()
        guard let bound = await ports.next(), bound > 0 else {
            running.cancel()
            throw UpstreamError.didNotStart
        }
        return Upstream(port: bound, gate: gate, counts: counts, group: group, running: running)
    }

    /// The URL of `path` (with its query) here.
    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// How many requests for `path` arrived.
    func hits(_ path: String) -> Int { counts.read { $0.hits[path] ?? 0 } }

    /// The requests being served now, and the most served at once so far.
    var serving: (now: Int, most: Int) { counts.read { ($0.serving, $0.mostServing) } }

    func stop() async throws {
        await group.triggerGracefulShutdown()
        try await running.value
    }

    /// Lets every `/held` request through, those waiting and those to come: what a failed test
    /// does before it stops the servers, whose shutdown waits for the requests they serve.
    func releaseEveryHeldRequest() {
        for _ in 0..<1_000 { _ = gate.signal() }
    }

    enum UpstreamError: Error { case didNotStart }

    /// Counts each request by path, and the requests in progress.
    struct Counting: RouterMiddleware {
        let counts: Protected<Counts>

        func handle(
            _ request: Request, context: BasicRequestContext,
            next: (Request, BasicRequestContext) async throws -> Response
        ) async throws -> Response {
            counts.write {
                $0.hits[request.uri.path, default: 0] += 1
                $0.serving += 1
                $0.mostServing = max($0.mostServing, $0.serving)
            }
            defer { counts.write { $0.serving -= 1 } }
            return try await next(request, context)
        }
    }
}

/// The proxy under test, listening on 127.0.0.1, and a client to ask it.
struct RunningProxy: Sendable {
    let service: ProxyService
    let port: Int
    private let upstreamClient: HTTPClient
    private let client: HTTPClient
    private let running: Task<Void, any Error>

    static func start(
        _ configuration: ProxyConfiguration, drain: Duration = .seconds(30), logger: Logger = Logger(label: "proxy")
    ) async throws -> RunningProxy {
        let upstreamClient = Proxy.makeClient(for: configuration)
        let registry = PrometheusCollectorRegistry()
        let proxy = Proxy(
            configuration: configuration, client: upstreamClient, metrics: PrometheusMetricsFactory(registry: registry),
            logger: logger)
        let (port, reportPort) = AsyncStream.makeStream(of: Int.self)
        let service = ProxyService(
            proxy: proxy, registry: registry, host: "127.0.0.1", port: 0, drain: drain, signals: [], logger: logger,
            onServerRunning: { channel in
                reportPort.yield(channel.localAddress?.port ?? 0)
                reportPort.finish()
            })
        let running = Task { try await service.group.run() }
        var ports = port.makeAsyncIterator()
        guard let bound = await ports.next(), bound > 0 else {
            running.cancel()
            throw Upstream.UpstreamError.didNotStart
        }
        return RunningProxy(
            service: service, port: bound, upstreamClient: upstreamClient,
            client: HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup), running: running)
    }

    /// What the proxy answers `GET path`.
    func get(_ path: String) async throws -> (status: Int, headers: HTTPHeaders, body: String) {
        let response = try await client.execute(
            HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)"), timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 64 << 20)
        return (Int(response.status.code), response.headers, String(buffer: body))
    }

    /// What the proxy answers `GET /fetch?url=` with `target` percent-encoded.
    func fetch(_ target: String) async throws -> (status: Int, headers: HTTPHeaders, body: String) {
        try await get("/fetch?url=" + target.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)
    }

    /// Whether the proxy accepts a TCP connection now (closed again at once).
    func acceptsConnections() async -> Bool {
        do {
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(host: "127.0.0.1", port: port).get()
            try? await channel.close()
            return true
        } catch {
            return false
        }
    }

    /// A TCP connection to the proxy on which nothing is sent: an idle client.
    func idleConnection() async throws -> any Channel {
        try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port).get()
    }

    /// Begins ``stop()`` in a task of its own: a test then waits, bounded, until ``Stopping/ended``.
    func stopInBackground() -> Stopping {
        let ended = Protected(false)
        let task = Task {
            try await stop()
            ended.write { $0 = true }
        }
        return Stopping(ended: ended, task: task)
    }

    /// A ``stop()`` under way.
    struct Stopping: Sendable {
        /// Set once the service has stopped and the clients are shut down.
        let ended: Protected<Bool>
        let task: Task<Void, any Error>
    }

    func stop() async throws {
        await service.group.triggerGracefulShutdown()
        try await running.value
        try await client.shutdown()
        try await upstreamClient.shutdown()
    }
}

/// Runs `body` with an upstream and a proxy that allows it (its configuration changed by
/// `change`), then stops both, whether `body` returned or threw: a test that fails leaves no
/// server behind, and no request held at the upstream.
func withProxy(
    _ change: (inout ProxyConfiguration) -> Void = { _ in },
    _ body: (Upstream, RunningProxy) async throws -> Void
) async throws {
    let upstream = try await Upstream.start()
    do {
        let proxy = try await RunningProxy.start(configuration(allowing: upstream, change))
        do {
            try await body(upstream, proxy)
        } catch {
            upstream.releaseEveryHeldRequest()
            try? await proxy.stop()
            throw error
        }
        try await proxy.stop()
    } catch {
        upstream.releaseEveryHeldRequest()
        try? await upstream.stop()
        throw error
    }
    try await upstream.stop()
}

/// The configuration the tests start from: `upstream` allowed, small limits.
func configuration(allowing upstream: Upstream, _ change: (inout ProxyConfiguration) -> Void = { _ in })
    -> ProxyConfiguration
{
    var configuration = ProxyConfiguration(
        allowedOrigins: [Origin("http://127.0.0.1:\(upstream.port)")!], cacheBytes: 1 << 20, maxClientRequests: 8,
        maxUpstreamRequests: 4, maxBodyBytes: 64 << 10, attemptTimeout: .seconds(20), attempts: 2)
    change(&configuration)
    return configuration
}

/// The log lines a logger writes, each as its message and its request id (`hb.request.id`, which
/// Hummingbird puts on each request's logger), kept for a test to read.
final class LogLines: Sendable {
    private let lines = Protected<[(message: String, requestID: String?)]>([])

    /// A logger at `.info` whose lines are kept here.
    var logger: Logger {
        var logger = Logger(label: "proxy") { _ in Handler(lines: self) }
        logger.logLevel = .info
        return logger
    }

    /// The request ids of the lines whose message is `message`.
    func requestIDs(of message: String) -> [String?] {
        lines.read { $0.filter { $0.message == message }.map(\.requestID) }
    }

    private struct Handler: LogHandler {
        let lines: LogLines
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .info

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let requestID = (event.metadata?["hb.request.id"] ?? metadata["hb.request.id"]).map { "\($0)" }
            lines.lines.write { $0.append((event.message.description, requestID)) }
        }
    }
}
