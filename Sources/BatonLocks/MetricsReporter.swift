#if Metrics
import CoreMetrics

#if Lifecycle
import ServiceLifecycle
#endif

/// Samples the statistics that Baton's types keep into swift-metrics, so that a service's
/// dashboard shows its caches, job queues, fetchers, semaphores and locks.
///
/// ```swift
/// let reporter = MetricsReporter(interval: .seconds(10))
/// reporter.watch(images, name: "images")        // a MemoryCache
/// reporter.watch(thumbnails, name: "thumbnails")  // a JobQueue
/// reporter.watch(fetcher, name: "upstream")       // a Fetcher
/// reporter.watch(downloads, name: "downloads")    // an AsyncSemaphore
/// reporter.watchLocks()                           // every named lock
///
/// let group = ServiceGroup(services: [reporter, server], logger: logger)
/// ```
///
/// **Exporting costs the hot paths nothing.** Baton's types count what they do whether or not
/// anything watches them, in the cheap way each already does (a relaxed atomic add on a striped
/// counter, or a count kept under a lock the operation takes anyway). The reporter reads those
/// counts every ``interval`` and hands the differences to swift-metrics: no metrics handler is
/// called on a cache lookup, a job start or a request. What a dashboard sees is therefore at most
/// one interval old.
///
/// **What is exported** is listed, with names, labels and kinds, by each `watch` method:
/// ``watchLocks()``, ``watch(_:name:)`` for a semaphore, and the `watch` methods that BatonCache,
/// BatonJobs and BatonHTTP add for a `MemoryCache`, a `JobQueue` and a `Fetcher`. Names are
/// Prometheus-friendly: `baton_` first, counters end in `_total`, times are in seconds.
/// Each metric carries one dimension naming its source: `cache`, `queue`, `fetcher`,
/// `semaphore` or `lock`, valued with the name given to `watch`.
///
/// **Counters** export a total that only grows: the first report adds everything counted since
/// the source was created, later ones what was counted since. A count that went down (lock
/// statistics reset by ``LockDiagnostics/resetStatistics()``) is taken as counted since zero.
/// **Gauges** (entries in a cache, jobs running, waiters) record the value at the report.
///
/// **Lifetime.** The reporter does not keep what it watches alive: once a watched object is
/// released, the next report destroys its metrics (through the factory's `destroy…` calls) and
/// stops sampling it.
///
/// With the `Lifecycle` trait the reporter is a swift-service-lifecycle `Service`: ``run()``
/// reports every interval until the group shuts down gracefully or cancels it, reports once more
/// and returns.
///
/// Available with Baton's `Metrics` trait, which adds apple/swift-metrics.
///
/// Thread safety: every method may be called from any thread or task; reports are taken one at
/// a time.
public final class MetricsReporter: Sendable {
    /// How often ``run()`` reports.
    public let interval: Duration
    /// The factory the metrics are made by.
    let factory: any MetricsFactory
    /// The sources, and the metrics each has made so far. A report holds the lock while it
    /// samples, so two reports never hand the same difference to a counter twice.
    let sources: Protected<[MetricsSource]>

    /// Creates a reporter that watches nothing yet.
    ///
    /// - Parameters:
    ///   - interval: How often ``run()`` reports. Ten seconds by default, a common scrape
    ///     interval. Must be positive.
    ///   - factory: The swift-metrics factory the metrics are made by: by default the one
    ///     bootstrapped with `MetricsSystem.bootstrap(_:)`, read when a metric is first made. Pass
    ///     one to export to a backend of your own, or to a test's `TestMetrics`.
    /// - Precondition: `interval > .zero`.
    public init(interval: Duration = .seconds(10), factory: (any MetricsFactory)? = nil) {
        precondition(interval > .zero, "MetricsReporter: the interval must be positive (got \(interval))")
        self.interval = interval
        self.factory = factory ?? BootstrappedFactory()
        self.sources = Protected([])
    }

    /// Samples every source once and exports what changed since the last report.
    ///
    /// ``run()`` calls it every interval; call it yourself to export on a schedule of your own
    /// (before a scrape, at the end of a batch).
    public func report() {
        sources.write { sources in
            sources.removeAll { source in
                guard source.sample(factory) else {
                    source.destroyMetrics()
                    return true
                }
                return false
            }
        }
    }

    /// Reports every ``interval`` on `clock`, starting at once, until the task is cancelled
    /// (with the `Lifecycle` trait: or its `ServiceGroup` shuts down gracefully); then reports
    /// once more, so that the last counts are exported, and returns.
    ///
    /// - Parameter clock: The clock the interval is measured on.
    public func run<C: Clock>(clock: C) async where C.Duration == Duration {
        #if Lifecycle
        await cancelWhenGracefulShutdown { await self.reportUntilCancelled(clock: clock) }
        #else
        await reportUntilCancelled(clock: clock)
        #endif
        report()
    }

    /// Reports every ``interval`` on the continuous clock, starting at once, until the task is
    /// cancelled (with the `Lifecycle` trait: or its `ServiceGroup` shuts down gracefully); then
    /// reports once more and returns.
    public func run() async {
        await run(clock: ContinuousClock())
    }

    private func reportUntilCancelled<C: Clock>(clock: C) async where C.Duration == Duration {
        while !Task.isCancelled {
            report()
            do { try await clock.sleep(for: interval) } catch { return }
        }
    }

    /// Starts sampling a source. `kind` is the dimension's key (`cache`, `queue`…), `name` its
    /// value; `sample` returns `false` once the source's object is gone.
    ///
    /// - Precondition: no source of the same kind and name is watched.
    package func watch(kind: String, name: String, sample: @escaping @Sendable (inout MetricsSample) -> Bool) {
        sources.write { sources in
            precondition(
                !sources.contains { $0.kind == kind && $0.name == name },
                "MetricsReporter: a \(kind) named \"\(name)\" is watched already; give each \(kind) a name of its own")
            sources.append(MetricsSource(kind: kind, name: name, sample: sample))
        }
    }

    /// Samples the contention statistics of every named lock (``LockDiagnostics/statistics()``)
    /// into `baton_lock_acquisitions_total`, `baton_lock_contended_acquisitions_total` and
    /// `baton_lock_wait_seconds_total`, with a `lock` dimension holding the lock's name.
    ///
    /// Locks count only while ``LockDiagnostics/collectsStatistics`` is on; turn it on for the
    /// program's life (a few nanoseconds per acquisition of a named lock) to see them. A name
    /// seen once is exported from then on.
    ///
    /// - Precondition: the locks are not watched already.
    public func watchLocks() {
        watch(kind: "locks", name: "") { sample in
            for lock in LockDiagnostics.statistics() {
                let dimensions = [("lock", lock.name)]
                sample.count("baton_lock_acquisitions_total", dimensions, lock.acquisitions)
                sample.count("baton_lock_contended_acquisitions_total", dimensions, lock.contendedAcquisitions)
                sample.seconds("baton_lock_wait_seconds_total", dimensions, lock.totalWait)
            }
            return true
        }
    }

    /// Samples a semaphore: `baton_semaphore_waiters`, the tasks waiting for a permit, and
    /// `baton_semaphore_permits_available`, with a `semaphore` dimension holding `name`.
    ///
    /// - Precondition: no other semaphore is watched under `name`.
    public func watch(_ semaphore: AsyncSemaphore, name: String) {
        watch(kind: "semaphore", name: name) { [weak semaphore] sample in
            guard let semaphore else { return false }
            let dimensions = [("semaphore", name)]
            let count = semaphore.permitsLessWaiters
            sample.gauge("baton_semaphore_waiters", dimensions, max(0, -count))
            sample.gauge("baton_semaphore_permits_available", dimensions, max(0, count))
            return true
        }
    }
}

#if Lifecycle
/// The reporter as a swift-service-lifecycle `Service`: ``MetricsReporter/run()`` reports until
/// the group shuts down gracefully or cancels it, reports once more and returns. List it first in
/// the group, so that it is shut down last and exports the final counts of the services after it.
extension MetricsReporter: Service {}
#endif

/// One watched source and the metrics it has made, touched only under the reporter's lock.
final class MetricsSource: @unchecked Sendable {
    let kind: String
    let name: String
    private let sampler: @Sendable (inout MetricsSample) -> Bool
    private var metrics: [String: MetricsSample.Metric] = [:]

    init(kind: String, name: String, sample: @escaping @Sendable (inout MetricsSample) -> Bool) {
        self.kind = kind
        self.name = name
        self.sampler = sample
    }

    /// Samples the source into its metrics; `false` if the source is gone.
    func sample(_ factory: any MetricsFactory) -> Bool {
        var sample = MetricsSample(factory: factory, metrics: metrics)
        metrics = [:]
        defer { metrics = sample.metrics }
        return sampler(&sample)
    }

    func destroyMetrics() {
        for metric in metrics.values { metric.destroy() }
        metrics = [:]
    }
}

/// What a source hands the reporter at a report: the totals and values it reads.
package struct MetricsSample {
    enum Metric {
        case counter(Counter, last: Int)
        case seconds(FloatingPointCounter, last: Duration)
        case gauge(Gauge)

        func destroy() {
            switch self {
            case .counter(let counter, _): counter.destroy()
            case .seconds(let counter, _): counter.destroy()
            case .gauge(let gauge): gauge.destroy()
            }
        }
    }

    let factory: any MetricsFactory
    var metrics: [String: Metric]

    /// A counter's total so far: the counter grows by what was added since the last report.
    package mutating func count(_ label: String, _ dimensions: [(String, String)], _ total: Int) {
        let key = Self.key(label, dimensions)
        var last = 0
        let counter: Counter
        if case .counter(let existing, let previous) = metrics[key] {
            counter = existing
            last = previous
        } else {
            counter = Counter(label: label, dimensions: dimensions, factory: factory)
        }
        let added = Self.added(total, since: last)
        if added > 0 { counter.increment(by: Int64(added)) }
        metrics[key] = .counter(counter, last: total)
    }

    /// A time's total so far, exported in seconds: the counter grows by what was added since the
    /// last report.
    package mutating func seconds(_ label: String, _ dimensions: [(String, String)], _ total: Duration) {
        let key = Self.key(label, dimensions)
        var last = Duration.zero
        let counter: FloatingPointCounter
        if case .seconds(let existing, let previous) = metrics[key] {
            counter = existing
            last = previous
        } else {
            counter = FloatingPointCounter(label: label, dimensions: dimensions, factory: factory)
        }
        let added = Self.added(total, since: last)
        if added > .zero { counter.increment(by: Self.seconds(added)) }
        metrics[key] = .seconds(counter, last: total)
    }

    /// A value at this moment.
    package mutating func gauge(_ label: String, _ dimensions: [(String, String)], _ value: Int) {
        gauge(label, dimensions, Double(value))
    }

    /// A value at this moment.
    package mutating func gauge(_ label: String, _ dimensions: [(String, String)], _ value: Double) {
        let key = Self.key(label, dimensions)
        let gauge: Gauge
        if case .gauge(let existing) = metrics[key] {
            gauge = existing
        } else {
            gauge = Gauge(label: label, dimensions: dimensions, factory: factory)
        }
        gauge.record(value)
        metrics[key] = .gauge(gauge)
    }

    /// What a total gained since the last report. A total below the last one was reset: what it
    /// holds was counted since.
    private static func added<Total: Comparable & AdditiveArithmetic>(_ total: Total, since last: Total) -> Total {
        total >= last ? total - last : total
    }

    private static func key(_ label: String, _ dimensions: [(String, String)]) -> String {
        dimensions.reduce(label) { key, dimension in key + "\u{0}" + dimension.0 + "\u{0}" + dimension.1 }
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// The factory bootstrapped with `MetricsSystem.bootstrap(_:)`, read when each metric is made,
/// so that a reporter created before the bootstrap still exports to it.
private struct BootstrappedFactory: MetricsFactory {
    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        MetricsSystem.factory.makeCounter(label: label, dimensions: dimensions)
    }
    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        MetricsSystem.factory.makeFloatingPointCounter(label: label, dimensions: dimensions)
    }
    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        MetricsSystem.factory.makeMeter(label: label, dimensions: dimensions)
    }
    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        MetricsSystem.factory.makeRecorder(label: label, dimensions: dimensions, aggregate: aggregate)
    }
    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        MetricsSystem.factory.makeTimer(label: label, dimensions: dimensions)
    }
    func destroyCounter(_ handler: any CounterHandler) { MetricsSystem.factory.destroyCounter(handler) }
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {
        MetricsSystem.factory.destroyFloatingPointCounter(handler)
    }
    func destroyMeter(_ handler: any MeterHandler) { MetricsSystem.factory.destroyMeter(handler) }
    func destroyRecorder(_ handler: any RecorderHandler) { MetricsSystem.factory.destroyRecorder(handler) }
    func destroyTimer(_ handler: any TimerHandler) { MetricsSystem.factory.destroyTimer(handler) }
}
#endif
