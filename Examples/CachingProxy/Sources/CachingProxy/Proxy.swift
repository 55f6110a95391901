import AsyncHTTPClient
import BatonCache
import BatonHTTP
import BatonLocks
import Foundation
import Logging
import Metrics

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Whether an answer's body came from the cache or from the upstream.
public enum CacheOutcome: String, Sendable {
    case hit, miss
}

/// What the proxy answers a client: a status, the headers it sets, a body, and (for a body from
/// an upstream) whether the cache had it.
public struct ProxyAnswer: Sendable {
    /// The HTTP status.
    public var status: Int
    /// The headers the proxy sets besides `X-Cache` and `X-Request-Id`: the upstream's
    /// `Content-Type`, or its own for an answer of its own, and `Retry-After` with a 503.
    public var headers: [(name: String, value: String)]
    /// The body: the upstream's, or a line saying why.
    public var body: Data
    /// `hit` or `miss` for a body the proxy relays, sent as `X-Cache`; `nil` for an answer of the
    /// proxy's own (a refusal, an upstream failure).
    public var cache: CacheOutcome?

    /// An answer of the proxy's own: `status`, and the reason as a line of text.
    static func problem(_ status: Int, _ reason: String, headers: [(name: String, value: String)] = []) -> ProxyAnswer {
        ProxyAnswer(
            status: status, headers: headers + [("Content-Type", "text/plain; charset=utf-8")],
            body: Data((reason + "\n").utf8), cache: nil)
    }
}

/// A body kept in the cache, with the content type it was served with.
public struct CachedBody: Sendable {
    /// The body, as the upstream sent it.
    public let data: Data
    /// Its `Content-Type`, if the upstream sent one.
    public let contentType: String?
}

/// The proxy: fetches allowed upstream URLs through a `Fetcher` (bounded, coalesced, retried,
/// each attempt timed out), keeps what the upstream lets it keep in a `MemoryCache` with a byte
/// budget, and sheds load beyond a bound on the client requests it handles at once.
///
/// Thread safety: ``handle(url:logger:)`` may be called from any task, concurrently.
public final class Proxy: Sendable {
    public let configuration: ProxyConfiguration
    /// The bodies kept, by the URL the client asked for; each costs its size in bytes.
    public let cache: MemoryCache<URL, CachedBody>
    /// The fetcher every upstream request goes through.
    public let fetcher: Fetcher
    /// Client requests being handled now.
    private let handling = Protected(0)
    /// Client requests taken (the handler started) and answered (it returned), since the start.
    private let tally = Protected((taken: 0, answered: 0))
    private let metrics: (any MetricsFactory)?

    /// Creates a proxy that sends its upstream requests through `client`.
    ///
    /// - Parameters:
    ///   - configuration: The allowed origins and the limits.
    ///   - client: An `HTTPClient` that does not follow redirects (the proxy follows them itself,
    ///     within the allowed origins) and allows `maxUpstreamRequests` connections to a host;
    ///     ``makeClient(for:)`` makes one.
    ///   - metrics: Where the per-request counter `proxy_requests_total` goes; `nil` for the
    ///     global factory of `MetricsSystem`.
    ///   - logger: Where the fetcher logs its retries and give-ups.
    public init(
        configuration: ProxyConfiguration, client: HTTPClient, metrics: (any MetricsFactory)? = nil, logger: Logger
    ) {
        self.configuration = configuration
        self.metrics = metrics
        cache = MemoryCache(costLimit: configuration.cacheBytes)
        fetcher = Fetcher(
            transport: HTTPClientTransport(client: client, maximumBodySize: configuration.maxBodyBytes),
            maxConcurrentRequests: configuration.maxUpstreamRequests,
            retryPolicy: .init(
                attempts: configuration.attempts, backoff: .jittered(initial: .milliseconds(50), maximum: .seconds(2))),
            requestTimeout: configuration.attemptTimeout)
        fetcher.setEventLogger(logger)
    }

    /// An `HTTPClient` for a proxy with `configuration`: it does not follow redirects, and keeps
    /// up to `maxUpstreamRequests` connections to a host. Shut it down after the proxy.
    public static func makeClient(for configuration: ProxyConfiguration) -> HTTPClient {
        var settings = HTTPClient.Configuration()
        settings.redirectConfiguration = .disallow
        settings.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = configuration.maxUpstreamRequests
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: settings)
    }

    /// Answers a client's `GET /fetch?url=…`, `url` being the query's value (decoded).
    ///
    /// - 400: no `url`, or not an absolute http or https URL without credentials.
    /// - 403: an origin that is not allowed, or a redirect to one.
    /// - 503 with `Retry-After`: `maxClientRequests` are being handled already, or the proxy is
    ///   shutting down.
    /// - 502: the upstream failed after its retries (an error, a transient status), sent a body
    ///   over `maxBodyBytes`, or redirected too many times; the body says which.
    /// - Otherwise the upstream's status, body and content type, with `X-Cache: hit` if the body
    ///   came from the cache and `miss` if it was fetched. A 200 is kept for as long as its
    ///   `Cache-Control` allows (``CacheLifetime``).
    public func handle(url: String?, logger: Logger) async -> ProxyAnswer {
        tally.write { $0.taken += 1 }
        defer { tally.write { $0.answered += 1 } }
        let admitted = handling.write { handling in
            guard handling < configuration.maxClientRequests else { return false }
            handling += 1
            return true
        }
        guard admitted else {
            let answer = ProxyAnswer.problem(
                503, "the proxy is handling \(configuration.maxClientRequests) requests already",
                headers: [("Retry-After", "1")])
            count(answer)
            return answer
        }
        defer { handling.write { $0 -= 1 } }
        let answer = await answer(url, logger: logger)
        count(answer)
        return answer
    }

    /// The client requests being handled now.
    public var requestsInFlight: Int { handling.value }

    /// The client requests taken since the start, and those answered: equal once the service has
    /// shut down, since it answers every request it takes.
    public var requestsTaken: (taken: Int, answered: Int) { tally.value }

    private func answer(_ query: String?, logger: Logger) async -> ProxyAnswer {
        guard let query, !query.isEmpty else { return .problem(400, "give the upstream URL as ?url=…") }
        guard let url = URL(string: query), url.scheme != nil, url.host != nil else {
            return .problem(400, "not an absolute URL: \(query)")
        }
        guard let origin = Origin(of: url) else {
            return .problem(400, "the proxy fetches http and https URLs without credentials, not \(query)")
        }
        guard configuration.allowedOrigins.contains(origin) else {
            return .problem(403, "\(origin) is not an allowed origin")
        }
        if let cached = cache.value(forKey: url) {
            return relay(200, cached.data, contentType: cached.contentType, .hit)
        }
        var current = url
        for _ in 0...configuration.maxRedirects {
            let result: URLResult
            do {
                result = try await fetcher.result(of: current).value
            } catch {
                return .problem(503, "the request was cancelled", headers: [("Retry-After", "1")])
            }
            switch result {
            case .error(let error as FetcherShutDownError, _, _):
                logger.info("refused: shutting down", metadata: ["url": "\(current)", "reason": "\(error.reason)"])
                return .problem(503, "the proxy is shutting down", headers: [("Retry-After", "1")])
            case .error(let error as URLError, _, _) where error.code == .dataLengthExceedsMaximum:
                logger.warning("upstream body over the limit", metadata: ["url": "\(current)"])
                return .problem(502, "the upstream body of \(current) is over \(configuration.maxBodyBytes) bytes")
            case .error(let error, _, _):
                logger.warning("upstream failed", metadata: ["url": "\(current)", "error": "\(error)"])
                return .problem(502, "the upstream failed: \(error)")
            case .response(let data, let response):
                let http = response as? HTTPURLResponse
                let status = http?.statusCode ?? 200
                if (300..<400).contains(status), status != 304,
                    let location = http?.value(forHTTPHeaderField: "Location")
                {
                    guard let next = URL(string: location, relativeTo: current)?.absoluteURL,
                        let nextOrigin = Origin(of: next), configuration.allowedOrigins.contains(nextOrigin)
                    else {
                        return .problem(403, "\(current) redirects to \(location), outside the allowed origins")
                    }
                    current = next
                    continue
                }
                if HTTPStatusError(statusCode: status, data: data, response: response).isTransient {
                    logger.warning("upstream failed", metadata: ["url": "\(current)", "status": "\(status)"])
                    return .problem(
                        502, "the upstream answered \(status) to \(current) after \(configuration.attempts) attempt(s)")
                }
                let contentType = http?.value(forHTTPHeaderField: "Content-Type")
                if status == 200,
                    let lifetime = CacheLifetime.of(cacheControl: http?.value(forHTTPHeaderField: "Cache-Control"))
                {
                    cache.setValue(
                        CachedBody(data: data, contentType: contentType), forKey: url, cost: data.count,
                        timeToLive: lifetime)
                }
                return relay(status, data, contentType: contentType, .miss)
            }
        }
        return .problem(502, "\(url) redirected more than \(configuration.maxRedirects) times")
    }

    private func relay(_ status: Int, _ body: Data, contentType: String?, _ outcome: CacheOutcome) -> ProxyAnswer {
        ProxyAnswer(
            status: status, headers: contentType.map { [("Content-Type", $0)] } ?? [], body: body, cache: outcome)
    }

    /// Counts an answer in `proxy_requests_total`, by status and cache outcome.
    private func count(_ answer: ProxyAnswer) {
        let dimensions = [("status", "\(answer.status)"), ("cache", answer.cache?.rawValue ?? "none")]
        let counter =
            if let metrics {
                Counter(label: "proxy_requests_total", dimensions: dimensions, factory: metrics)
            } else {
                Counter(label: "proxy_requests_total", dimensions: dimensions)
            }
        counter.increment()
    }
}
