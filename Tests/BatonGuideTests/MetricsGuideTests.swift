#if Metrics
import Baton
import CoreMetrics

/// Watches what the thumbnail service is made of. `factory` is the metrics backend; `nil` means
/// the one bootstrapped with `MetricsSystem.bootstrap(_:)` (a Prometheus registry, say).
func thumbnailMetrics(
    pages: MemoryCache<URL, Data>, fetcher: Fetcher, renders: JobQueue, factory: (any MetricsFactory)? = nil
) -> MetricsReporter {
    let reporter = MetricsReporter(interval: .seconds(10), factory: factory)
    reporter.watch(pages, name: "pages")
    reporter.watch(fetcher, name: "upstream")
    reporter.watch(renders, name: "renders")
    reporter.watchLocks()
    return reporter
}

// The code above is the Metrics block of Baton.docc/RunningBatonInAService.md, verbatim.

import BatonTestSupport
import Foundation
import MetricsTestKit
import Testing

@Suite("Guide: a service's metrics", .timeLimit(.minutes(1)))
struct MetricsGuideTests {
    @Test("the thumbnail service's cache, fetcher and queue are exported under the names the guide gives")
    func theGuidesNamesAreExported() async throws {
        let metrics = TestMetrics()
        let pages = MemoryCache<URL, Data>()
        let fetcher = Fetcher(maxConcurrentRequests: 2)
        let renders = JobQueue(name: "renders")
        let reporter = thumbnailMetrics(pages: pages, fetcher: fetcher, renders: renders, factory: metrics)

        let url = try await GuideServer.url("/text/\(uniqueKey("page"))")
        let page = try await fetcher.body(of: url).timeout(after: patience).value
        pages.setValue(page, forKey: url)
        _ = pages.value(forKey: url)
        renders.addJob {}
        await renders.allJobsFinished()
        reporter.report()

        #expect(try metrics.expectCounter("baton_cache_hits_total", [("cache", "pages")]).totalValue == 1)
        #expect(try metrics.expectGauge("baton_queue_jobs_waiting", [("queue", "renders")]).lastValue == 0)
        let answered = try metrics.expectCounter(
            "baton_fetcher_requests_total", [("fetcher", "upstream"), ("outcome", "succeeded")])
        #expect(answered.totalValue == 1)
    }
}
#endif
