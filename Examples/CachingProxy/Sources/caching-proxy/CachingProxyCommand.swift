import ArgumentParser
import CachingProxy
import Logging
import Prometheus

/// `caching-proxy --allow http://127.0.0.1:9000 [--port 8080] …`: the proxy until SIGTERM or
/// SIGINT, after which it drains and exits 0.
@main
struct CachingProxyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "caching-proxy",
        abstract: "A caching HTTP proxy for a fixed list of upstream origins, built on Baton.",
        discussion: """
            GET /fetch?url=<percent-encoded URL> fetches an allowed upstream URL (X-Cache: hit or miss); \
            GET /metrics serves Prometheus metrics; GET /healthz answers ok.
            """)

    @Option(name: .long, help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(name: .long, help: "The port to listen on.")
    var port = 8080

    @Option(name: .customLong("allow"), help: "An origin the proxy may fetch from, as scheme://host:port (repeatable).")
    var allowed: [String] = []

    @Option(name: .customLong("cache-mb"), help: "The cache's budget, in MiB of bodies.")
    var cacheMegabytes = 64

    @Option(name: .customLong("max-requests"), help: "The most client requests handled at once; the next gets 503.")
    var maxRequests = 256

    @Option(name: .customLong("max-upstream"), help: "The most requests on the wire to the upstreams at once.")
    var maxUpstream = 32

    @Option(name: .customLong("max-body-mb"), help: "The longest upstream body accepted, in MiB.")
    var maxBodyMegabytes = 8

    @Option(name: .customLong("attempt-timeout"), help: "Seconds one upstream attempt may take.")
    var attemptTimeout = 10.0

    @Option(name: .long, help: "The most attempts at an upstream request.")
    var attempts = 3

    @Option(name: .customLong("drain-seconds"), help: "Seconds the requests in flight have once SIGTERM arrives.")
    var drainSeconds = 10.0

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel = "info"

    func validate() throws {
        guard !allowed.isEmpty else {
            throw ValidationError("give at least one --allow origin: the proxy is never open")
        }
        for origin in allowed where Origin(origin) == nil {
            throw ValidationError("--allow \(origin): not an origin; write scheme://host:port, http or https")
        }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level \(logLevel): unknown level")
        }
        guard (1...65535).contains(port) else { throw ValidationError("--port must be from 1 to 65535") }
        guard cacheMegabytes >= 0, maxBodyMegabytes >= 0 else { throw ValidationError("sizes must not be negative") }
        guard maxRequests >= 1, maxUpstream >= 1, attempts >= 1 else {
            throw ValidationError("--max-requests, --max-upstream and --attempts must be at least 1")
        }
        guard attemptTimeout > 0, drainSeconds >= 0 else {
            throw ValidationError("--attempt-timeout must be positive and --drain-seconds not negative")
        }
    }

    func run() async throws {
        var logger = Logger(label: "caching-proxy")
        logger.logLevel = Logger.Level(rawValue: logLevel)!
        let configuration = ProxyConfiguration(
            allowedOrigins: Set(allowed.compactMap(Origin.init)), cacheBytes: cacheMegabytes << 20,
            maxClientRequests: maxRequests, maxUpstreamRequests: maxUpstream, maxBodyBytes: maxBodyMegabytes << 20,
            attemptTimeout: .milliseconds(Int(attemptTimeout * 1_000)), attempts: attempts)
        let client = Proxy.makeClient(for: configuration)
        let registry = PrometheusCollectorRegistry()
        let proxy = Proxy(
            configuration: configuration, client: client, metrics: PrometheusMetricsFactory(registry: registry),
            logger: logger)
        let service = ProxyService(
            proxy: proxy, registry: registry, host: host, port: port,
            drain: .milliseconds(Int(drainSeconds * 1_000)), logger: logger)
        logger.info(
            "listening",
            metadata: [
                "address": "\(host):\(port)", "allowed": "\(configuration.allowedOrigins.map(\.description).sorted())",
            ])
        do {
            try await service.group.run()
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
        let requests = proxy.requestsTaken
        logger.notice("stopped", metadata: ["taken": "\(requests.taken)", "answered": "\(requests.answered)"])
    }
}
