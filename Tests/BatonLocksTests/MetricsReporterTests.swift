#if Metrics
import BatonTestSupport
import Clocks
import CoreMetrics
import Dispatch
import MetricsTestKit
import Testing

@testable import BatonLocks

#if Lifecycle
import ServiceLifecycle
import ServiceLifecycleTestKit
#endif

/// A source whose totals the test sets, watched through the reporter's package entry point.
private final class Totals: Sendable {
    let values = Protected((count: 0, seconds: Duration.zero, gauge: 0))
}

private func watchTotals(_ reporter: MetricsReporter, _ totals: Totals, name: String = "t") {
    reporter.watch(kind: "totals", name: name) { [weak totals] sample in
        guard let totals else { return false }
        let values = totals.values.value
        sample.count("test_count_total", [("totals", name)], values.count)
        sample.seconds("test_seconds_total", [("totals", name)], values.seconds)
        sample.gauge("test_gauge", [("totals", name)], values.gauge)
        return true
    }
}

/// `MetricsReporter`: totals exported as counter increments, gauges as values, sources that are
/// gone destroyed, and the reports of `run` on a manual clock. Every value is read back through
/// swift-metrics' own test backend.
@Suite(.timeLimit(.minutes(1)), .offTheCooperativePool) struct MetricsReporterTests {
    @Test func aCounterGrowsByWhatWasCountedSinceTheLastReport() throws {
        let metrics = TestMetrics()
        let reporter = MetricsReporter(factory: metrics)
        let totals = Totals()
        watchTotals(reporter, totals)
        totals.values.write { $0 = (count: 5, seconds: .milliseconds(2500), gauge: 7) }
        reporter.report()
        let counter = try metrics.expectCounter("test_count_total", [("totals", "t")])
        #expect(counter.values == [5])
        // swift-metrics' test backend keeps whole numbers: fractions of a second add up until
        // they make one.
        let seconds = try metrics.expectCounter("test_seconds_total", [("totals", "t")])
        #expect(seconds.totalValue == 2)
        #expect(try metrics.expectGauge("test_gauge", [("totals", "t")]).values == [7])

        // Nothing new: no increment at all; the gauge records its value again.
        reporter.report()
        #expect(counter.values == [5])
        #expect(seconds.totalValue == 2)
        totals.values.write { $0 = (count: 12, seconds: .milliseconds(4000), gauge: 3) }
        reporter.report()
        #expect(counter.values == [5, 7] && counter.totalValue == 12)
        #expect(seconds.totalValue == 4)
        #expect(try metrics.expectGauge("test_gauge", [("totals", "t")]).values == [7, 7, 3])
        // An increment of one is an increment.
        totals.values.write { $0.count = 13 }
        reporter.report()
        #expect(counter.values == [5, 7, 1])
    }

    @Test func aTotalThatWentDownWasCountedSinceZero() throws {
        let metrics = TestMetrics()
        let reporter = MetricsReporter(factory: metrics)
        let totals = Totals()
        watchTotals(reporter, totals)
        totals.values.write { $0.count = 10 }
        reporter.report()
        totals.values.write { $0.count = 4 }  // reset, then 4 counted
        reporter.report()
        let counter = try metrics.expectCounter("test_count_total", [("totals", "t")])
        #expect(counter.values == [10, 4] && counter.totalValue == 14)
    }

    @Test func aSourceThatIsGoneHasItsMetricsDestroyedAndIsNoLongerSampled() throws {
        let metrics = TestMetrics()
        let reporter = MetricsReporter(factory: metrics)
        var totals: Totals? = Totals()
        let other = Totals()
        watchTotals(reporter, totals!, name: "gone")
        watchTotals(reporter, other, name: "kept")
        totals!.values.write { $0.count = 3 }
        other.values.write { $0.count = 1 }
        reporter.report()
        #expect(metrics.counters(label: "test_count_total").count == 2)
        totals = nil
        reporter.report()
        #expect(metrics.counters(label: "test_count_total").map(\.dimensions.first?.1) == ["kept"])
        #expect(metrics.recorders(label: "test_gauge").count == 1)
        #expect(reporter.sources.read(\.count) == 1)
        // The name is free again.
        let again = Totals()
        watchTotals(reporter, again, name: "gone")
        again.values.write { $0.count = 2 }
        reporter.report()
        #expect(try metrics.expectCounter("test_count_total", [("totals", "gone")]).values == [2])
    }

    @Test func watchingTwoSourcesOfOneKindUnderOneNameStopsWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let reporter = MetricsReporter(factory: TestMetrics())
            let first = AsyncSemaphore(value: 1)
            let second = AsyncSemaphore(value: 1)
            reporter.watch(first, name: "downloads")
            reporter.watch(second, name: "downloads")
        }
        #if DEBUG
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("a semaphore named \"downloads\" is watched already"), "stderr: \(message)")
        #else
        _ = result
        #endif
    }

    @Test func concurrentReportsHandEachIncrementToTheCounterOnce() throws {
        let metrics = TestMetrics()
        let reporter = MetricsReporter(factory: metrics)
        let totals = Totals()
        watchTotals(reporter, totals)
        // Four threads count 1,000 each while four others report.
        DispatchQueue.concurrentPerform(iterations: 8) { index in
            for _ in 0..<1000 {
                if index < 4 { totals.values.write { $0.count += 1 } } else { reporter.report() }
            }
        }
        reporter.report()
        #expect(try metrics.expectCounter("test_count_total", [("totals", "t")]).totalValue == 4000)
    }

    @Test func theDefaultFactoryIsTheBootstrappedOneReadWhenAMetricIsMade() async {
        // In a process of its own: the bootstrap is once per process. The reporter is made
        // before the bootstrap, and still exports to the factory bootstrapped after it.
        await #expect(processExitsWith: .success) {
            let reporter = MetricsReporter()
            var totals: Totals? = Totals()
            watchTotals(reporter, totals!)
            let metrics = TestMetrics()
            MetricsSystem.bootstrap(metrics)
            totals!.values.write { $0.count = 3 }
            reporter.report()
            let exported = try? metrics.expectCounter("test_count_total", [("totals", "t")]).totalValue
            guard exported == 3 else { fatalError("exported \(String(describing: exported)), not 3") }
            // A source that is gone has each of its metrics destroyed through that factory too.
            totals = nil
            reporter.report()
            for label in ["test_count_total", "test_seconds_total", "test_gauge"]
            where !metrics.counters(label: label).isEmpty || !metrics.recorders(label: label).isEmpty {
                fatalError("\(label) was not destroyed")
            }
        }
    }

    // MARK: Sources of BatonLocks

    @Test func aSemaphoreExportsItsWaitersAndFreePermits() async throws {
        let metrics = TestMetrics()
        let reporter = MetricsReporter(factory: metrics)
        let semaphore = AsyncSemaphore(value: 2)
        reporter.watch(semaphore, name: "downloads")
        reporter.report()
        let waiters = try metrics.expectGauge("baton_semaphore_waiters", [("semaphore", "downloads")])
        let free = try metrics.expectGauge("baton_semaphore_permits_available", [("semaphore", "downloads")])
        #expect(waiters.lastValue == 0 && free.lastValue == 2)

        try await semaphore.wait()
        try await semaphore.wait()
        let tasks = (0..<3).map { _ in Task { try await semaphore.wait() } }
        #expect(await eventuallyHolds { semaphore.waitingCount == 3 })
        reporter.report()
        #expect(waiters.lastValue == 3 && free.lastValue == 0)
        for _ in 0..<3 { semaphore.signal() }
        for task in tasks { try await task.value(within: 10) }
        reporter.report()
        #expect(waiters.lastValue == 0 && free.lastValue == 0)
        semaphore.signal()
        reporter.report()
        #expect(waiters.lastValue == 0 && free.lastValue == 1)
    }

    @Test func aSemaphoreThatIsGoneHasItsGaugesDestroyed() throws {
        let metrics = TestMetrics()
        let reporter = MetricsReporter(factory: metrics)
        var semaphore: AsyncSemaphore? = AsyncSemaphore(value: 1)
        reporter.watch(semaphore!, name: "gone")
        reporter.report()
        #expect(try metrics.expectGauge("baton_semaphore_permits_available", [("semaphore", "gone")]).lastValue == 1)
        semaphore = nil
        reporter.report()
        #expect(metrics.recorders(label: "baton_semaphore_permits_available").isEmpty)
        #expect(metrics.recorders(label: "baton_semaphore_waiters").isEmpty)
        #expect(reporter.sources.read(\.count) == 0)
    }

    // MARK: Running

    @Test func runReportsAtOnceThenEveryIntervalAndOnceMoreWhenCancelled() async throws {
        let metrics = TestMetrics()
        let clock = TestClock()
        let reporter = MetricsReporter(interval: .seconds(10), factory: metrics)
        let totals = Totals()
        watchTotals(reporter, totals)
        let reports: @Sendable () -> Int = {
            (try? metrics.expectGauge("test_gauge", [("totals", "t")]))?.values.count ?? 0
        }
        let running = Task { await reporter.run(clock: clock) }
        #expect(await eventuallyHolds { reports() == 1 })
        // Each advance waits for the reporter's sleep: an advance that came first would pass
        // the deadline before the sleep was registered (as a busy machine once showed).
        #expect(await sleeps(on: clock))
        await clock.advance(by: .seconds(9))
        #expect(reports() == 1)
        await clock.advance(by: .seconds(1))
        #expect(await eventuallyHolds { reports() == 2 })
        for expected in 3...4 {
            #expect(await sleeps(on: clock))
            await clock.advance(by: .seconds(10))
            #expect(await eventuallyHolds { reports() == expected })
        }
        totals.values.write { $0.count = 9 }
        running.cancel()
        await running.value(within: 10)
        #expect(reports() == 5)
        #expect(try metrics.expectCounter("test_count_total", [("totals", "t")]).totalValue == 9)
    }

    /// Whether a task sleeps on `clock` within 30 s (`checkSuspension()` throws while one does).
    private func sleeps(on clock: TestClock<Duration>) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if (try? await clock.checkSuspension()) == nil { return true }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return false
    }

    @Test func aZeroIntervalStopsWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = MetricsReporter(interval: .zero)
        }
        #if DEBUG
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("the interval must be positive"), "stderr: \(message)")
        #else
        _ = result
        #endif
    }

    #if Lifecycle
    @Test func asAServiceItReportsOnceMoreAndReturnsOnGracefulShutdown() async throws {
        let metrics = TestMetrics()
        let reporter = MetricsReporter(interval: .seconds(3600), factory: metrics)
        let totals = Totals()
        watchTotals(reporter, totals)
        let reports: @Sendable () -> Int = {
            (try? metrics.expectGauge("test_gauge", [("totals", "t")]))?.values.count ?? 0
        }
        try await testGracefulShutdown { shutdown in
            let running = Task { try await (reporter as any Service).run() }
            #expect(await eventuallyHolds { reports() == 1 })
            totals.values.write { $0.count = 4 }
            shutdown.triggerGracefulShutdown()
            try await running.value(within: 10)
        }
        #expect(reports() == 2)
        #expect(try metrics.expectCounter("test_count_total", [("totals", "t")]).totalValue == 4)
    }
    #endif
}
/// The lock statistics are global: exported in the serialized suite of the diagnostics, so that
/// no other test turns them off meanwhile.
extension LockDiagnosticsTests {
    @Test("The metrics reporter exports the statistics of named locks, as counted")
    func metricsReporterExportsLockStatistics() throws {
        let name = "metrics-test-lock"
        let wasCollecting = LockDiagnostics.collectsStatistics
        LockDiagnostics.collectsStatistics = true
        defer { LockDiagnostics.collectsStatistics = wasCollecting }
        let metrics = TestMetrics()
        let reporter = MetricsReporter(factory: metrics)
        reporter.watchLocks()
        let lock = Lock(name: name)
        let counter = Guarded(0)  // guarded by `lock`
        #expect(raceThreads(4) { _ in for _ in 0..<2_500 { lock.withLock { counter.value += 1 } } })
        reporter.report()
        let statistics = try #require(LockDiagnostics.statistics().first { $0.name == name })
        #expect(statistics.acquisitions == 10_000)
        let acquisitions = try metrics.expectCounter("baton_lock_acquisitions_total", [("lock", name)])
        #expect(acquisitions.totalValue == 10_000)
        let contended = try metrics.expectCounter("baton_lock_contended_acquisitions_total", [("lock", name)])
        #expect(contended.totalValue == Int64(statistics.contendedAcquisitions))
        // swift-metrics' test backend keeps whole numbers: fractions of a second add up until
        // they make one.
        let wait = try metrics.expectCounter("baton_lock_wait_seconds_total", [("lock", name)])
        #expect(wait.totalValue == statistics.totalWait.components.seconds)

        for _ in 0..<5 { lock.withLock {} }
        reporter.report()
        #expect(acquisitions.totalValue == 10_005)
    }
}
#endif
