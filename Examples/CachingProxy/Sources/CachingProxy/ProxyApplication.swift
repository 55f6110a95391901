import BatonHTTP
import BatonLocks
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Prometheus
import ServiceLifecycle
import UnixSignals

/// The proxy's HTTP routes, on a Hummingbird router:
///
/// - `GET /fetch?url=…`: ``Proxy/handle(url:logger:)``, with `X-Cache` on a relayed body and
///   `X-Request-Id` on every answer (the id the request's log lines carry).
/// - `GET /metrics`: everything `registry` holds, in Prometheus' text format.
/// - `GET /healthz`: `ok`.
public func makeRouter(proxy: Proxy, registry: PrometheusCollectorRegistry) -> Router<BasicRequestContext> {
    let router = Router()
    router.get("fetch") { request, context -> Response in
        let url = request.uri.queryParameters["url"].map(String.init)
        let answer = await proxy.handle(url: url, logger: context.logger)
        var headers = HTTPFields()
        for (name, value) in answer.headers {
            if let name = HTTPField.Name(name) { headers.append(HTTPField(name: name, value: value)) }
        }
        if let outcome = answer.cache { headers[xCache] = outcome.rawValue }
        headers[xRequestID] = context.id
        return Response(
            status: HTTPResponse.Status(code: answer.status), headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer.body)))
    }
    router.get("metrics") { _, _ -> Response in
        Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
    }
    router.get("healthz") { _, _ -> String in "ok\n" }
    return router
}

private let xCache = HTTPField.Name("X-Cache")!
private let xRequestID = HTTPField.Name("X-Request-Id")!

/// The whole service: the proxy's routes served on `host`:`port`, the fetcher and a metrics
/// reporter, in one swift-service-lifecycle `ServiceGroup`.
///
/// On graceful shutdown (SIGTERM or SIGINT, or ``ServiceGroup/triggerGracefulShutdown()``):
/// 1. the HTTP server stops accepting connections at once, closes its idle ones, and answers the
///    requests it has taken, each as it would have before (a miss still fetches its upstream, with
///    its retries), closing each connection after its answer;
/// 2. if some are still waiting for an upstream when `drain` has passed, the fetcher cuts them off:
///    they are answered 503 with `Retry-After`. Once the server has answered everything it took, the
///    fetcher shuts down at once, without waiting out the drain;
/// 3. the reporter, which reports once more.
///
/// So the group's `run()` returns within `drain` and a moment more, every request it took
/// answered.
///
/// Thread safety: its parts may be used from any task; run ``group`` once.
public struct ProxyService: Sendable {
    /// The proxy the routes answer with.
    public let proxy: Proxy
    /// What `/metrics` serves.
    public let registry: PrometheusCollectorRegistry
    /// The reporter that samples the cache and the fetcher into `registry`.
    public let reporter: MetricsReporter
    /// The services, in their shutdown order: run it, and trigger its graceful shutdown (or send
    /// a signal it listens for) to stop.
    public let group: ServiceGroup

    /// - Parameters:
    ///   - proxy: The proxy; its fetcher is shut down with the group.
    ///   - registry: Where the metrics go, and what `/metrics` serves.
    ///   - host: The address to listen on.
    ///   - port: The port; 0 for one the system picks (``onServerRunning`` receives the channel).
    ///   - drain: How long requests in flight have once the shutdown begins.
    ///   - reportInterval: How often the reporter samples Baton's statistics.
    ///   - signals: The signals that shut the group down gracefully.
    ///   - logger: The service's logger.
    ///   - onServerRunning: Called once the server listens (with its channel: its local address).
    public init(
        proxy: Proxy, registry: PrometheusCollectorRegistry, host: String, port: Int, drain: Duration,
        reportInterval: Duration = .seconds(1), signals: [UnixSignal] = [.sigterm, .sigint], logger: Logger,
        onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) {
        self.proxy = proxy
        self.registry = registry
        let factory = PrometheusMetricsFactory(registry: registry)
        reporter = MetricsReporter(interval: reportInterval, factory: factory)
        reporter.watch(proxy.cache, name: "proxy")
        reporter.watch(proxy.fetcher, name: "upstream")
        let application = Application(
            router: makeRouter(proxy: proxy, registry: registry),
            configuration: .init(address: .hostname(host, port: port), serverName: "caching-proxy"),
            onServerRunning: onServerRunning, logger: logger)
        // The group shuts down last first: the server and the fetcher together, then the reporter.
        group = ServiceGroup(
            configuration: .init(
                services: [
                    .init(service: reporter),
                    .init(service: DrainingServer(server: application, fetcher: proxy.fetcher, drain: drain)),
                ],
                gracefulShutdownSignals: signals, cancellationSignals: [], logger: logger))
    }
}

/// The HTTP server and the fetcher its requests use, as one service: a graceful shutdown reaches
/// both at once. In a `ServiceGroup` of their own two services would shut down one after the other,
/// and neither order drains: the fetcher first would refuse the upstream requests of clients the
/// server still takes; the server first would wait for requests the fetcher does not yet bound.
///
/// Here the server stops accepting at once and answers what it took; the fetcher serves those
/// requests as usual for `drain`, then cuts off what is left. The service returns when the server
/// has answered everything, the fetcher shut down.
struct DrainingServer: Service {
    let server: any Service
    let fetcher: Fetcher
    let drain: Duration

    func run() async throws {
        // Both children see the group's graceful shutdown: it is a task-local their tasks inherit.
        try await withThrowingTaskGroup(of: Bool.self) { children in
            children.addTask {
                try await server.run()
                return true
            }
            children.addTask {
                // Until the shutdown begins (or this task is cancelled), then for the drain; the
                // server's end cancels the wait, and so cuts the drain short.
                try? await gracefulShutdown()
                try? await Task.sleep(for: drain)
                await fetcher.shutDown(gracePeriod: .zero)
                return false
            }
            // The server ends once every connection it took is closed, each request answered (or
            // when it fails); the fetcher then has nothing to wait for. The fetcher's end, when the
            // drain is over, leaves the server to write the answers of the requests it cut off.
            while let serverEnded = try await children.next() {
                if serverEnded { children.cancelAll() }
            }
        }
    }
}
