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
/// On graceful shutdown (SIGTERM or SIGINT, or ``ServiceGroup/triggerGracefulShutdown()``) the
/// services stop in this order:
/// 1. the fetcher (`FetcherService`): it refuses new upstream requests at once (those clients
///    get 503 with `Retry-After`; cached bodies are still served), gives the ones in flight
///    `drain` to be answered, then cuts them off (503);
/// 2. the HTTP server: it stops accepting connections and answers what it has taken, which no
///    longer waits for any upstream;
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
        // Shut down last first: the fetcher, then the server, then the reporter.
        group = ServiceGroup(
            configuration: .init(
                services: [
                    .init(service: reporter), .init(service: application),
                    .init(service: FetcherService(proxy.fetcher, gracePeriod: drain)),
                ],
                gracefulShutdownSignals: signals, cancellationSignals: [], logger: logger))
    }
}
