import BatonCache
import BatonHTTP
import BatonJobs
import BatonLocks
import Foundation
import Prometheus
import Testing

@testable import BatonBench

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A transport that answers every request at once with a 200 and a 5-byte body.
private struct Answering: HTTPTransport {
    struct Done: HTTPTransportTask { func cancel() {} }
    func send(_ request: URLRequest, completion: @escaping @Sendable (URLResult) -> Void) -> any HTTPTransportTask {
        let response = HTTPURLResponse(url: request.url!, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: [:])
        completion(.response(Data("hello".utf8), response!))
        return Done()
    }
}

/// What `MetricsReporter` exports, through swift-prometheus as a service scrapes it: every
/// documented metric, with its type and labels, in text Prometheus accepts.
@Suite(.timeLimit(.minutes(1)))
struct PrometheusExportTests {
    @Test func everySourceExportsItsDocumentedMetricsInPrometheusText() async throws {
        let registry = PrometheusCollectorRegistry()
        let reporter = MetricsReporter(factory: PrometheusMetricsFactory(registry: registry))
        let cache = MemoryCache<Int, Int>(countLimit: 2)
        let queue = JobQueue(name: "jobs")
        let fetcher = Fetcher(transport: Answering(), retryPolicy: .none)
        let semaphore = AsyncSemaphore(value: 1)
        reporter.watch(cache, name: "images")
        reporter.watch(queue, name: "thumbnails")
        reporter.watch(fetcher, name: "upstream")
        reporter.watch(semaphore, name: "downloads")
        reporter.watchLocks()

        for key in 0..<3 { cache.setValue(key, forKey: key) }
        _ = cache.value(forKey: 2)
        queue.addJob {}
        await queue.allJobsFinished()
        _ = try await fetcher.body(of: URL(string: "http://127.0.0.1:9/a")!).value
        reporter.report()
        let text = registry.emitToString()

        let counters = [
            #"baton_cache_hits_total{cache="images"} 1"#,
            #"baton_cache_evictions_total{cache="images",reason="count"} 1"#,
            #"baton_queue_jobs_added_total{queue="thumbnails"} 1"#,
            #"baton_queue_jobs_finished_total{queue="thumbnails",outcome="succeeded"} 1"#,
            #"baton_fetcher_requests_total{fetcher="upstream",outcome="succeeded"} 1"#,
            #"baton_fetcher_sent_total{fetcher="upstream"} 1"#,
            #"baton_fetcher_received_bytes_total{fetcher="upstream"} 5"#,
        ]
        for line in counters {
            #expect(text.contains(line), "missing \(line) in:\n\(text)")
        }
        let gauges = [
            #"baton_cache_entries{cache="images"} 2"#,
            #"baton_queue_jobs_running{queue="thumbnails"} 0"#,
            #"baton_fetcher_requests_in_flight{fetcher="upstream"} 0"#,
            #"baton_semaphore_permits_available{semaphore="downloads"} 1"#,
        ]
        for line in gauges {
            #expect(text.contains(line), "missing \(line) in:\n\(text)")
        }
        // Every name is valid in Prometheus, typed, and a counter exactly when it ends in _total
        // or is a total of seconds.
        let types = text.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }.map { $0.split(separator: " ") }
        // The 26 of the table in "Running Baton in a service": 8 of the cache, 6 of the queue, 7 of
        // the fetcher, 2 of the semaphore, 3 of the locks.
        #expect(types.count == 26)
        for type in types {
            let name = String(type[2])
            #expect(name.wholeMatch(of: /baton_[a-z_]+/) != nil, "\(name)")
            #expect((type[3] == "counter") == name.hasSuffix("_total"), "\(name) is a \(type[3])")
        }
    }

    @Test func theBenchsWatchedCacheExportsWhileItRuns() async throws {
        let cache = WatchedMemoryCache(capacity: 10)
        cache.set(1, 1)
        _ = cache.get(1)
        let deadline = ContinuousClock.now + .seconds(30)
        while !cache.registry.emitToString().contains(#"baton_cache_hits_total{cache="bench"} 1"#),
            ContinuousClock.now < deadline
        {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(cache.registry.emitToString().contains(#"baton_cache_hits_total{cache="bench"} 1"#))
    }
}
