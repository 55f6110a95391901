import BatonFutures
import BatonLocks
import BatonTestSupport
import Foundation
import Testing

@testable import BatonHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if Logging
import Logging
#endif

/// The fetcher's events, against the fault server on 127.0.0.1: each retry, with the attempt,
/// the cause and the wait the timer is asked for, and each request whose last attempt failed.
@Suite(.timeLimit(.minutes(1))) struct FetcherEventTests {
    /// Collects the events of a fetcher.
    final class Events: Sendable {
        private let stored = Protected<[Fetcher.Event]>([])
        var all: [Fetcher.Event] { stored.value }
        func handler(_ event: Fetcher.Event) { stored.write { $0.append(event) } }
    }

    private func fetcher(attempts: Int, timer: RecordingTimer) -> Fetcher {
        Fetcher(
            transport: makeSession(), maxConcurrentRequests: 2,
            retryPolicy: .init(attempts: attempts, backoff: .constant(.milliseconds(5))),
            requestTimeout: nil, retryTimer: timer.timer)
    }

    /// A fetcher as above whose events are collected.
    private func observed(attempts: Int, timer: RecordingTimer = RecordingTimer()) -> (Fetcher, Events) {
        let fetcher = fetcher(attempts: attempts, timer: timer)
        let events = Events()
        fetcher.setEventHandler(events.handler)
        return (fetcher, events)
    }

    @Test("Each retry is reported with the failed attempt, the cause and the wait; a success ends them")
    func retriesAreReported() async throws {
        let server = try FaultServer.shared()
        let key = uniqueKey("events-retry")
        let timer = RecordingTimer()
        let (fetcher, events) = observed(attempts: 3, timer: timer)
        let url = server.url("status", key, "fail=2&code=503&retry-after=1")
        _ = try await fetcher.body(of: url).value(within: patience)

        let retries = events.all.compactMap { event -> (Int, Int?, Duration)? in
            guard case .retrying(let request, let attempt, let cause, let delay) = event else { return nil }
            #expect(request.url == url)
            return (attempt, (cause as? HTTPStatusError)?.statusCode, delay)
        }
        #expect(retries.map(\.0) == [1, 2])
        #expect(retries.map(\.1) == [503, 503])
        // The wait reported is the wait asked of the timer: Retry-After's second, over the backoff.
        #expect(retries.map(\.2) == timer.delays)
        #expect(timer.delays == [.seconds(1), .seconds(1)])
        #expect(events.all.count == 2)
        #expect(events.all.first?.description.contains("GET \(url.absoluteString) failed on attempt 1") == true)
    }

    @Test("A request whose retries run out is reported as given up, after its retries, with the last cause")
    func giveUpIsReported() async throws {
        let server = try FaultServer.shared()
        let key = uniqueKey("events-give-up")
        let (fetcher, events) = observed(attempts: 3)
        let result = try await fetcher.result(of: server.url("status", key, "fail=9&code=502")).value(
            within: patience)
        #expect(result.statusCode == 502)
        #expect(server.hits(key) == 3)
        let all = events.all
        #expect(all.count == 3)
        guard case .gaveUp(_, let attempts, let cause) = all.last else {
            Issue.record("the last event is not a give-up: \(all)")
            return
        }
        #expect(attempts == 3)
        #expect((cause as? HTTPStatusError)?.statusCode == 502)
        #expect(all.last?.description.contains("failed after 3 attempts") == true)
    }

    @Test("A POST that loses its connection is sent once and reported as given up after 1 attempt")
    func nonIdempotentGiveUpIsReported() async throws {
        let server = try FaultServer.shared()
        let key = uniqueKey("events-post")
        let (fetcher, events) = observed(attempts: 3)
        var request = URLRequest(url: server.url("reset-headers", key, "fail=1"))
        request.httpMethod = "POST"
        request.httpBody = Data("payload".utf8)
        _ = try await fetcher.result(of: request).value(within: patience)
        let all = events.all
        #expect(all.count == 1)
        guard case .gaveUp(let reported, 1, _) = all.first else {
            Issue.record("expected one give-up after 1 attempt: \(all)")
            return
        }
        #expect(reported.httpMethod == "POST")
    }

    @Test("A success, and a status that is not transient, report nothing; a handler set to nil gets no more")
    func quietRequestsReportNothing() async throws {
        let server = try FaultServer.shared()
        let (fetcher, events) = observed(attempts: 3)
        _ = try await fetcher.result(of: server.url("status", uniqueKey("events-ok"), "code=200")).value(
            within: patience)
        let notFound = try await fetcher.result(of: server.url("status", uniqueKey("events-400"), "code=400")).value(
            within: patience)
        #expect(notFound.statusCode == 400)
        #expect(events.all.isEmpty)

        fetcher.setEventHandler(nil)
        _ = try await fetcher.result(of: server.url("status", uniqueKey("events-off"), "fail=1&code=503")).value(
            within: patience)
        #expect(events.all.isEmpty)
    }

    #if Logging
    @Test("With a logger, a retry is logged at info and a give-up at warning, with the request and cause as metadata")
    func eventsAreLogged() async throws {
        let server = try FaultServer.shared()
        let key = uniqueKey("events-log")
        let fetcher = fetcher(attempts: 2, timer: RecordingTimer())
        let capture = LogCapture()
        fetcher.setEventLogger(capture.logger)
        let url = server.url("status", key, "fail=9&code=503")
        _ = try await fetcher.result(of: url).value(within: patience)

        let entries = capture.entries
        #expect(entries.map(\.level) == [.info, .warning])
        let retry = try #require(entries.first)
        #expect(retry["baton.event"] == "retrying")
        #expect(retry["http.method"] == "GET")
        #expect(retry["url"] == url.absoluteString)
        #expect(retry["baton.attempt"] == "1")
        #expect(retry["baton.cause"] == "status 503")
        #expect(retry["baton.retry_in_ms"] == "5.0")
        let giveUp = try #require(entries.last)
        #expect(giveUp["baton.event"] == "gave-up")
        #expect(giveUp["baton.attempts"] == "2")
        #expect(giveUp["baton.cause"] == "status 503")
        #expect(giveUp["baton.attempt"] == nil)
    }
    #endif
}
