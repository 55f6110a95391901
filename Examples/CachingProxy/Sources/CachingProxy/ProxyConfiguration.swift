import Foundation

/// An upstream origin the proxy may fetch from: a scheme, a host and a port.
///
/// Two URLs have the same origin when all three are equal (schemes and hosts compared in lower
/// case, a missing port read as the scheme's default): `http://127.0.0.1:9000/a` and
/// `HTTP://127.0.0.1:9000/b?c` do; `http://127.0.0.1:9001/a`, `https://127.0.0.1:9000/a` and
/// `http://localhost:9000/a` do not.
public struct Origin: Hashable, Sendable, CustomStringConvertible {
    /// `http` or `https`, in lower case.
    public let scheme: String
    /// The host name or address, in lower case.
    public let host: String
    /// The port, the scheme's default if the URL names none.
    public let port: Int

    /// The origin of `url`, or `nil` if it has none the proxy can fetch from: a scheme other
    /// than `http` or `https`, no host, or a user name or password (never sent upstream).
    public init?(of url: URL) {
        guard let scheme = url.scheme?.lowercased(), let port = Self.defaultPorts[scheme],
            let host = url.host?.lowercased(), !host.isEmpty, url.user == nil, url.password == nil
        else { return nil }
        self.scheme = scheme
        self.host = host
        self.port = url.port ?? port
    }

    /// The origin written as `scheme://host[:port]`, as `--allow` takes it; `nil` if it is
    /// anything more (a path, a query, a user) or less.
    public init?(_ string: String) {
        guard let url = URL(string: string), url.query == nil, url.fragment == nil, url.path.isEmpty || url.path == "/"
        else { return nil }
        self.init(of: url)
    }

    public var description: String { "\(scheme)://\(host):\(port)" }

    private static let defaultPorts = ["http": 80, "https": 443]
}

/// How the proxy behaves: where it may fetch from, how much it holds, and how much it lets in.
///
/// A value: copies are independent, and it may be passed between threads.
public struct ProxyConfiguration: Sendable {
    /// The origins the proxy fetches from; every other one is refused with 403.
    public var allowedOrigins: Set<Origin>
    /// The cache's budget: the bytes of the bodies it holds at most.
    public var cacheBytes: Int
    /// The most client requests handled at once; the next one is answered 503 at once.
    public var maxClientRequests: Int
    /// The most requests on the wire to the upstreams at once (the fetcher's bound).
    public var maxUpstreamRequests: Int
    /// The longest upstream body the proxy accepts; a longer one is 502 and never cached.
    public var maxBodyBytes: Int
    /// How long one upstream attempt may take.
    public var attemptTimeout: Duration
    /// The most attempts at an upstream request (transient failures are retried).
    public var attempts: Int
    /// The most redirects followed, each within the allowed origins.
    public var maxRedirects: Int

    /// A configuration; every limit is checked here, and a value out of range stops the
    /// program with a message naming it.
    public init(
        allowedOrigins: Set<Origin>, cacheBytes: Int = 64 << 20, maxClientRequests: Int = 256,
        maxUpstreamRequests: Int = 32, maxBodyBytes: Int = 8 << 20, attemptTimeout: Duration = .seconds(10),
        attempts: Int = 3, maxRedirects: Int = 5
    ) {
        precondition(cacheBytes >= 0, "ProxyConfiguration: cacheBytes must not be negative")
        precondition(maxClientRequests >= 1, "ProxyConfiguration: maxClientRequests must be at least 1")
        precondition(maxUpstreamRequests >= 1, "ProxyConfiguration: maxUpstreamRequests must be at least 1")
        precondition(maxBodyBytes >= 0, "ProxyConfiguration: maxBodyBytes must not be negative")
        precondition(attemptTimeout > .zero, "ProxyConfiguration: attemptTimeout must be positive")
        precondition(attempts >= 1, "ProxyConfiguration: attempts must be at least 1")
        precondition(maxRedirects >= 0, "ProxyConfiguration: maxRedirects must not be negative")
        self.allowedOrigins = allowedOrigins
        self.cacheBytes = cacheBytes
        self.maxClientRequests = maxClientRequests
        self.maxUpstreamRequests = maxUpstreamRequests
        self.maxBodyBytes = maxBodyBytes
        self.attemptTimeout = attemptTimeout
        self.attempts = attempts
        self.maxRedirects = maxRedirects
    }
}
