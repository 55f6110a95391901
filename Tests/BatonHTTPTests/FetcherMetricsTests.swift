#if Metrics
import BatonFutures
import BatonLocks
import BatonTestSupport
import Clocks
import CoreMetrics
import Foundation
import MetricsTestKit
import Testing

@testable import BatonHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A fetcher watched by `MetricsReporter`: requests by outcome, in flight and queued, retries by
/// cause, requests sent, their time on the wire and the bytes received, read back through
/// swift-metrics' test backend. Requests wait on a transport that answers when the test says.
@Suite(.timeLimit(.minutes(1)), .offTheCooperativePool) struct FetcherMetricsTests {
    private static let fetcher = ("fetcher", "upstream")

    private static func request(_ method: String, _ path: String) -> URLRequest {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:9\(path)")!)
        request.httpMethod = method
        return request
    }

    private func requests(_ metrics: TestMetrics, _ outcome: String) throws -> Int64 {
        try metrics.expectCounter("baton_fetcher_requests_total", [Self.fetcher, ("outcome", outcome)]).totalValue
    }

    private func gauge(_ metrics: TestMetrics, _ label: String) throws -> Double? {
        try metrics.expectGauge(label, [Self.fetcher]).lastValue
    }

    @Test func requestsAreCountedByOutcomeAndTheSlotsByUse() async throws {
        let transport = ManualTransport()
        let fetcher = Fetcher(transport: transport, maxConcurrentRequests: 1, retryPolicy: .none)
        let metrics = TestMetrics()
        let reporter = MetricsReporter(factory: metrics)
        reporter.watch(fetcher, name: "upstream")

        let ok = fetcher.result(of: Self.request("GET", "/ok"))
        let missing = fetcher.result(of: Self.request("GET", "/missing"))
        let failing = fetcher.result(of: Self.request("POST", "/failing"))
        let cancelled = fetcher.result(of: Self.request("GET", "/cancelled"))
        _ = await transport.waitForSent(1)
        reporter.report()
        #expect(try gauge(metrics, "baton_fetcher_requests_in_flight") == 1)
        #expect(try gauge(metrics, "baton_fetcher_requests_queued") == 3)
        #expect(try requests(metrics, "succeeded") == 0)

        cancelled.cancel()
        transport.sent[0].answer(200, "hello")
        await transport.waitForSent(2)[1].answer(404, "not here!")
        await transport.waitForSent(3)[2].fail(URLError(.badServerResponse))
        for future in [ok, missing, failing] { _ = try await future.value(within: patience) }
        await #expect(throws: CancellationError.self) { _ = try await cancelled.value(within: patience) }
        await fetcher.shutDown(gracePeriod: .seconds(10))
        let refused = try await fetcher.result(of: Self.request("GET", "/late")).value(within: patience)
        #expect(refused.error is FetcherShutDownError)
        reporter.report()

        #expect(try requests(metrics, "succeeded") == 1)
        #expect(try requests(metrics, "status_error") == 1)
        #expect(try requests(metrics, "error") == 1)
        #expect(try requests(metrics, "cancelled") == 1)
        #expect(try requests(metrics, "refused") == 1)
        #expect(try gauge(metrics, "baton_fetcher_requests_in_flight") == 0)
        #expect(try gauge(metrics, "baton_fetcher_requests_queued") == 0)
        #expect(try metrics.expectCounter("baton_fetcher_sent_total", [Self.fetcher]).totalValue == 3)
        #expect(try metrics.expectCounter("baton_fetcher_received_bytes_total", [Self.fetcher]).totalValue == 14)
        #expect(fetcher.counts.0.sendTime > .zero)
    }

    @Test func retriesAreCountedByCause() async throws {
        let transport = ManualTransport()
        let fetcher = Fetcher(transport: transport, retryPolicy: .init(attempts: 4, backoff: .none))
        let metrics = TestMetrics()
        let reporter = MetricsReporter(factory: metrics)
        reporter.watch(fetcher, name: "upstream")

        let result = fetcher.body(of: Self.request("GET", "/flaky"))
        await transport.waitForSent(1)[0].answer(503, "busy")
        await transport.waitForSent(2)[1].fail(URLError(.networkConnectionLost))
        await transport.waitForSent(3)[2].fail(URLError(.timedOut))
        await transport.waitForSent(4)[3].answer(200, "recovered")
        #expect(try await result.value(within: patience) == Data("recovered".utf8))
        reporter.report()

        func retries(_ cause: String) throws -> Int64 {
            try metrics.expectCounter("baton_fetcher_retries_total", [Self.fetcher, ("cause", cause)]).totalValue
        }
        #expect(try retries("status") == 1 && retries("error") == 1 && retries("timeout") == 1)
        #expect(try requests(metrics, "succeeded") == 1)
        #expect(try metrics.expectCounter("baton_fetcher_sent_total", [Self.fetcher]).totalValue == 4)
    }

    @Test func coalescedCallersAreEachCountedAndTheirRequestSentOnce() async throws {
        let transport = ManualTransport()
        let fetcher = Fetcher(transport: transport, retryPolicy: .none)
        let metrics = TestMetrics()
        let reporter = MetricsReporter(factory: metrics)
        reporter.watch(fetcher, name: "upstream")
        let callers = (0..<3).map { _ in fetcher.result(of: Self.request("GET", "/shared")) }
        await transport.waitForSent(1)[0].answer(200, "same")
        for caller in callers { _ = try await caller.value(within: patience) }
        reporter.report()
        #expect(try requests(metrics, "succeeded") == 3)
        #expect(try metrics.expectCounter("baton_fetcher_sent_total", [Self.fetcher]).totalValue == 1)
    }
}
#endif
