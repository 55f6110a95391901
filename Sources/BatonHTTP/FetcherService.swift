#if Lifecycle
import ServiceLifecycle

/// A ``Fetcher`` as a swift-service-lifecycle `Service`: it runs until its `ServiceGroup` shuts
/// down gracefully, then shuts the fetcher down (``Fetcher/shutDown(gracePeriod:clock:)``) and
/// returns when no request is left.
///
/// ```swift
/// let fetcher = Fetcher(maxConcurrentRequests: 8)
/// let group = ServiceGroup(
///     services: [FetcherService(fetcher, gracePeriod: .seconds(10)), server],
///     gracefulShutdownSignals: [.sigterm],
///     logger: logger)
/// try await group.run()
/// ```
///
/// The fetcher takes requests from the moment it is created, whether or not the service runs
/// yet: the service only ends it. On graceful shutdown the fetcher refuses new requests with a
/// ``FetcherShutDownError``, answers the ones it has taken within `gracePeriod`, then cuts off
/// what is left; `run()` returns once every request taken has been answered and nothing is on
/// the wire. If the group cancels the service instead (a cancellation signal, a failed service,
/// or the group's `maximumGracefulShutdownDuration` running out), the grace period ends at once.
///
/// A `ServiceGroup` shuts its services down in reverse order, the last one first: list the
/// fetcher before what sends requests through it (a server, a `JobQueueService` whose jobs
/// fetch), so that those have stopped when the fetcher stops taking requests.
///
/// Available with Baton's `Lifecycle` trait, which adds swift-server/swift-service-lifecycle.
///
/// Thread safety: a value type; `Sendable`.
public struct FetcherService<C: Clock>: Service, CustomStringConvertible {
    /// The fetcher the service shuts down.
    public let fetcher: Fetcher
    /// How long requests taken before graceful shutdown have to be answered before they are
    /// cut off.
    public let gracePeriod: C.Duration
    /// The clock the grace period runs on.
    public let clock: C

    /// A service that shuts `fetcher` down with a grace period on `clock`.
    ///
    /// - Parameters:
    ///   - fetcher: The fetcher to shut down.
    ///   - gracePeriod: How long requests taken have to be answered before they are cut off.
    ///   - clock: The clock the grace period runs on; a manual clock in tests.
    public init(_ fetcher: Fetcher, gracePeriod: C.Duration, clock: C) {
        self.fetcher = fetcher
        self.gracePeriod = gracePeriod
        self.clock = clock
    }

    /// Waits for graceful shutdown (or cancellation), then shuts the fetcher down and returns
    /// when no request is left.
    public func run() async {
        // Returns when graceful shutdown begins; throws when the task is cancelled first, and
        // the cancelled task then cuts the fetcher's grace period short.
        try? await gracefulShutdown()
        await fetcher.shutDown(gracePeriod: gracePeriod, clock: clock)
    }

    /// How the group's logs show the service.
    public var description: String { "FetcherService" }
}

extension FetcherService where C == ContinuousClock {
    /// A service that shuts `fetcher` down with a grace period on `ContinuousClock`.
    ///
    /// - Parameters:
    ///   - fetcher: The fetcher to shut down.
    ///   - gracePeriod: How long requests taken have to be answered before they are cut off.
    public init(_ fetcher: Fetcher, gracePeriod: Duration) {
        self.init(fetcher, gracePeriod: gracePeriod, clock: ContinuousClock())
    }
}
#endif
