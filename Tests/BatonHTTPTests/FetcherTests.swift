import BatonCache
import BatonFutures
import BatonLocks
import Foundation
import Testing

@testable import BatonHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

private func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

@Suite(.timeLimit(.minutes(1))) struct FetcherTests {
    /// Releases held requests one at a time, each once the server holds `limit` (or all that
    /// are left): the most ever in flight at the server must then be exactly `limit`.
    func checkBound(limit: Int, urls count: Int) async throws {
        let key = uniqueKey("bound\(limit)")
        let server = TestServer.shared
        let fetcher = Fetcher(session: makeSession(), maxConcurrentRequests: limit, retryPolicy: .none)
        var urls: [URL] = []
        for index in 0..<count { urls.append(try await TestServer.url("/held/\(key)?i=\(index)")) }
        let all = fetcher.results(of: urls)
        // Admission is decided as the batch is added: exactly `limit` start, the rest queue.
        #expect(fetcher.queuedRequests == count - limit)
        for released in 0..<count {
            let expected = min(limit, count - released)
            try await server.waitUntil("\(expected) requests are held") { server.inFlight(key) == expected }
            server.release(key)
        }
        let results = try await all.value(within: patience)
        #expect(server.maxInFlight(key) == limit)
        #expect(server.hits(key) == count)
        #expect(results.map { $0.statusCode } == Array(repeating: 200, count: count))
        #expect(results.allSatisfy { $0.data.map(text) == "held \(key)" })
    }

    @Test func atMostMaxConcurrentRequestsInFlight() async throws {
        try await checkBound(limit: 3, urls: 12)
    }

    @Test func aLimitAboveTheSessionsPerHostLimitIsReached() async throws {
        // URLSession allows 6 connections per host by default; the fetcher must raise it, on a
        // session of its own: the shared session keeps its limit.
        let sharedLimit = URLSession.shared.configuration.httpMaximumConnectionsPerHost
        #expect(sharedLimit < 8)
        #expect(Fetcher(maxConcurrentRequests: 8).connectionsPerHost == 8)
        #expect(URLSession.shared.configuration.httpMaximumConnectionsPerHost == sharedLimit)
        #expect(
            Fetcher(maxConcurrentRequests: 4).connectionsPerHost
                == URLSession.shared.configuration.httpMaximumConnectionsPerHost)
        try await checkBound(limit: 8, urls: 16)
    }

    @Test func resultsComeBackInInputOrder() async throws {
        let fetcher = Fetcher(session: makeSession(), maxConcurrentRequests: 4)
        var urls: [URL] = []
        var expected: [String] = []
        for index in 0..<24 {
            let key = uniqueKey("order\(index)")
            urls.append(try await TestServer.url(index % 5 == 4 ? "/status/404/\(key)" : "/hello/\(key)"))
            expected.append(index % 5 == 4 ? "status 404" : "hello \(key)")
        }
        urls.append(refusedURL)
        let results = try await fetcher.results(of: urls).value(within: patience)
        #expect(results.count == 25)
        #expect(results.prefix(24).map { $0.data.map(text) } == expected)
        #expect(results.last?.error != nil)
    }

    @Test func concurrentFetchesOfOneURLMakeOneRequest() async throws {
        let key = uniqueKey("coalesce")
        let url = try await TestServer.url("/held/\(key)")
        let fetcher = Fetcher(session: makeSession(), maxConcurrentRequests: 6)
        let fetches = (0..<50).map { _ in fetcher.body(of: url) }
        try await TestServer.shared.waitUntil("the request arrived") { TestServer.shared.inFlight(key) == 1 }
        TestServer.shared.release(key, count: 50)
        let bodies = try await Future.all(fetches).value(within: patience)
        #expect(bodies.map(text) == Array(repeating: "held \(key)", count: 50))
        #expect(TestServer.shared.hits(key) == 1)
    }

    @Test func oneCallerCancellingLeavesTheOthersTheirResult() async throws {
        let key = uniqueKey("leave")
        let url = try await TestServer.url("/held/\(key)")
        let fetcher = Fetcher(session: makeSession())
        let leaving = fetcher.body(of: url)
        let staying = fetcher.body(of: url)
        try await TestServer.shared.waitUntil("the request arrived") { TestServer.shared.inFlight(key) == 1 }
        leaving.cancel()
        TestServer.shared.release(key)
        #expect(text(try await staying.value(within: patience)) == "held \(key)")
        #expect(leaving.isCancelled)
        #expect(TestServer.shared.hits(key) == 1)
    }

    @Test func transientFailuresAreRetried() async throws {
        let key = uniqueKey("flaky")
        let url = try await TestServer.url("/flaky/\(key)?fail=2")
        let fetcher = Fetcher(
            session: makeSession(), retryPolicy: .init(attempts: 3, backoff: .constant(.milliseconds(5))))
        #expect(text(try await fetcher.body(of: url).value(within: patience)) == "ok")
        #expect(TestServer.shared.hits(key) == 3)
    }

    @Test func retriesStopAfterTheLimit() async throws {
        let key = uniqueKey("down")
        let url = try await TestServer.url("/flaky/\(key)?fail=100")
        // The timer records every wait asked of it and then waits it: the backoff is observed,
        // not timed.
        let timer = RecordingTimer()
        let fetcher = Fetcher(
            transport: makeSession(), maxConcurrentRequests: 6,
            retryPolicy: .init(attempts: 3, backoff: .exponential(initial: .milliseconds(2))), requestTimeout: nil,
            retryTimer: timer.timer)
        do {
            _ = try await fetcher.body(of: url).value(within: patience)
            Issue.record("a 503 must fail the fetch")
        } catch let error as HTTPStatusError {
            #expect(error.statusCode == 503)
        }
        #expect(TestServer.shared.hits(key) == 3)
        #expect(timer.delays == [.milliseconds(2), .milliseconds(4)])
        // results(of:) reports the last response rather than an error.
        let again = try await fetcher.results(of: [url]).value(within: patience)
        #expect(again.first?.statusCode == 503)
        #expect(TestServer.shared.hits(key) == 6)
        #expect(timer.delays == [.milliseconds(2), .milliseconds(4), .milliseconds(2), .milliseconds(4)])
    }

    @Test func nonTransientStatusesAndPostsAreNotRetried() async throws {
        let fetcher = Fetcher(session: makeSession(), retryPolicy: .init(attempts: 4, backoff: .none))
        let missing = uniqueKey("missing")
        let result = try await fetcher.result(of: try await TestServer.url("/status/404/\(missing)")).value(
            within: patience)
        #expect(result.statusCode == 404)
        #expect(TestServer.shared.hits(missing) == 1)

        let posted = uniqueKey("post")
        var request = URLRequest(url: try await TestServer.url("/flaky/\(posted)?fail=1"))
        request.httpMethod = "POST"
        let postResult = try await fetcher.result(of: request).value(within: patience)
        #expect(postResult.statusCode == 503)
        #expect(TestServer.shared.hits(posted) == 1)
    }

    @Test func refusedConnectionsAreRetriedThenReported() async throws {
        // Nothing listens, so the attempts are counted where they leave: at the transport.
        let transport = ImmediateCancelTransport(session: makeSession())
        let fetcher = Fetcher(transport: transport, retryPolicy: .init(attempts: 3, backoff: .none))
        let result = try await fetcher.result(of: refusedURL).value(within: patience)
        #expect((result.error as? URLError)?.code == .cannotConnectToHost)
        #expect(transport.sent(refusedURL) == 3)
    }

    @Test func fetchingARequestRetriesIdempotentMethodsOnly() async throws {
        let server = try FaultServer.shared()
        let fetcher = Fetcher(session: makeSession(), retryPolicy: .init(attempts: 3, backoff: .none))
        let put = uniqueKey("put")
        var request = URLRequest(url: server.url("status", put, "fail=2"))
        request.httpMethod = "PUT"
        request.httpBody = Data("body".utf8)
        #expect(text(try await fetcher.body(of: request).value(within: patience)) == "ok \(put)")
        #expect(server.methods(put) == ["PUT", "PUT", "PUT"])

        let patch = uniqueKey("patch")
        request = URLRequest(url: server.url("status", patch, "fail=2"))
        request.httpMethod = "PATCH"
        do {
            _ = try await fetcher.body(of: request).value(within: patience)
            Issue.record("a 503 to a PATCH must fail the fetch")
        } catch let error as HTTPStatusError {
            #expect(error.statusCode == 503)
            #expect(text(error.data) == "status 503")
        }
        #expect(server.methods(patch) == ["PATCH"])
    }

    @Test func cancellationStopsOutstandingRequests() async throws {
        let key = uniqueKey("cancel")
        let server = TestServer.shared
        let fetcher = Fetcher(session: makeSession(), maxConcurrentRequests: 1, retryPolicy: .none)
        var urls: [URL] = []
        for index in 0..<5 { urls.append(try await TestServer.url("/held/\(key)?i=\(index)")) }
        let all = fetcher.results(of: urls)
        try await server.waitUntil("the first request is held") { server.inFlight(key) == 1 }
        #expect(fetcher.queuedRequests == 4)
        all.cancel()
        #expect(fetcher.queuedRequests == 0)
        // The limiter is first in, first out with one slot: had any cancelled request still been
        // queued, it would reach the server before this one.
        let sentinel = uniqueKey("sentinel")
        let after = try await fetcher.body(of: try await TestServer.url("/hello/\(sentinel)")).value(within: patience)
        #expect(text(after) == "hello \(sentinel)")
        // Only the first request ever reached the server; none of the four queued behind it.
        #expect(server.hits("\(key)?i=0") >= 1)
        #expect((1..<5).map { server.hits("\(key)?i=\($0)") } == [0, 0, 0, 0])
        #expect(await (try? all.value(within: patience)) == nil)
        #expect(all.isCancelled)
        server.release(key, count: 5)
    }

    @Test func cancellingABatchSendsNoneOfItsQueuedRequests() async throws {
        // One slot. The first URL fails once with 503 and is retried at once: its retry queues
        // behind the second URL, which the server holds. Cancelling the batch frees the held
        // request's slot at once (this transport reports a cancellation from `cancel()`), and
        // whatever the order of the cancellations, that slot must not send the queued retry.
        let key = uniqueKey("batch")
        let server = TestServer.shared
        let flaky = try await TestServer.url("/flaky/\(key)-a?fail=1")
        let held = try await TestServer.url("/held/\(key)-b")
        let transport = ImmediateCancelTransport(session: makeSession())
        let fetcher = Fetcher(
            transport: transport, maxConcurrentRequests: 1, retryPolicy: .init(attempts: 3, backoff: .none))
        let all = fetcher.results(of: [flaky, held])
        try await server.waitUntil("the second request is held") { server.inFlight("\(key)-b") == 1 }
        #expect(fetcher.queuedRequests == 1)
        #expect(transport.sent(flaky) == 1)
        all.cancel()
        #expect(fetcher.queuedRequests == 0)
        #expect(await (try? all.value(within: patience)) == nil)
        // The slot is free and first in, first out: a later request is sent, and nothing of the
        // batch was sent before it.
        let sentinel = uniqueKey("batch-sentinel")
        let after = try await fetcher.body(of: try await TestServer.url("/hello/\(sentinel)")).value(within: patience)
        #expect(text(after) == "hello \(sentinel)")
        #expect(transport.sent(flaky) == 1)
        #expect(transport.sent(held) == 1)
        #expect(server.hits("\(key)-a") == 1)
        server.release("\(key)-b")
    }

    @Test func cancelAllSendsNoneOfTheQueuedRequests() async throws {
        let key = uniqueKey("cancel-all")
        let server = TestServer.shared
        let transport = ImmediateCancelTransport(session: makeSession())
        let fetcher = Fetcher(transport: transport, maxConcurrentRequests: 2, retryPolicy: .none)
        var urls: [URL] = []
        for index in 0..<6 { urls.append(try await TestServer.url("/held/\(key)?i=\(index)")) }
        let fetches = urls.map { fetcher.body(of: $0) }
        try await server.waitUntil("two requests are held") { server.inFlight(key) == 2 }
        #expect(fetcher.queuedRequests == 4)
        fetcher.cancelAll()
        #expect(fetcher.queuedRequests == 0)
        for fetch in fetches { #expect(await (try? fetch.value(within: patience)) == nil) }
        let sentinel = uniqueKey("cancel-all-sentinel")
        _ = try await fetcher.body(of: try await TestServer.url("/hello/\(sentinel)")).value(within: patience)
        #expect(urls.map { transport.sent($0) } == [1, 1, 0, 0, 0, 0])
        server.release(key, count: 2)
    }

    @Test func requestTimeoutFailsAHungAttemptAndRetriesIt() async throws {
        let key = uniqueKey("hung")
        let url = try await TestServer.url("/held/\(key)")
        // Both attempts must reach the server before their timeouts: a second, not less, for a
        // loaded machine.
        let fetcher = Fetcher(
            session: makeSession(), retryPolicy: .init(attempts: 2, backoff: .none), requestTimeout: .seconds(1))
        do {
            _ = try await fetcher.body(of: url).value(within: patience)
            Issue.record("a hung request must time out")
        } catch {
            #expect(error as? FutureError == .timedOut(after: .seconds(1)))
        }
        try await TestServer.shared.waitUntil("both attempts arrived") { TestServer.shared.hits(key) == 2 }
        TestServer.shared.release(key, count: 2)
    }

    @Test func overallTimeoutKeepsTheResultsThatArrived() async throws {
        let fast = uniqueKey("fast")
        let slow = uniqueKey("slow")
        // The deadline is the fetcher's timer, held until the fast answer is in and the slow
        // request waits at the server (it answers only when released, after the deadline).
        let timer = RecordingTimer(holdingOnly: .seconds(3))
        let transport = CountingTransport(session: makeSession())
        let fetcher = Fetcher(
            transport: transport, maxConcurrentRequests: 6, retryPolicy: .none, requestTimeout: nil,
            retryTimer: timer.timer)
        let urls = [try await TestServer.url("/hello/\(fast)"), try await TestServer.url("/held/\(slow)")]
        let batch = fetcher.results(of: urls, timeout: .seconds(3))
        try await TestServer.shared.waitUntil("the fast answer is in, the slow request at the server") {
            transport.handedOn == 1 && TestServer.shared.hits(slow) == 1
        }
        #expect(!batch.isCompleted)
        #expect(timer.delays == [.seconds(3)])
        timer.fireAll()
        let results = try await batch.value(within: patience)
        #expect(results[0].data.map(text) == "hello \(fast)")
        #expect(results[1].error as? FutureError == .timedOut(after: .seconds(3)))
        TestServer.shared.release(slow)
        try await TestServer.shared.waitUntil("the slow request was cancelled") { transport.out == 0 }
    }

    @Test func aCacheAnswersRepeatedFetches() async throws {
        let key = uniqueKey("cached")
        let url = try await TestServer.url("/hello/\(key)")
        let cache = MemoryCache<URL, Data>(costLimit: 1 << 20)
        let fetcher = Fetcher(session: makeSession(), cache: cache)
        #expect(text(try await fetcher.body(of: url).value(within: patience)) == "hello \(key)")
        #expect(cache.value(forKey: url).map(text) == "hello \(key)")
        let again = try await fetcher.result(of: url).value(within: patience)
        #expect(again.data.map(text) == "hello \(key)")
        #expect(again.statusCode == 200)
        #expect(TestServer.shared.hits(key) == 1)
        // Failures are not cached.
        let missing = try await TestServer.url("/status/404/\(uniqueKey("uncached"))")
        _ = try await fetcher.result(of: missing).value(within: patience)
        #expect(cache.value(forKey: missing) == nil)
        // Bodies are stored with their size as the cost.
        #expect(cache.totalCost == "hello \(key)".utf8.count)
    }

    @Test func customTransportsPlugIn() async throws {
        /// Counts the requests it passes on to a real session.
        final class CountingTransport: HTTPTransport {
            let sent = Protected(0)
            let session = makeSession()
            func send(_ request: URLRequest, completion: @escaping @Sendable (URLResult) -> Void)
                -> any HTTPTransportTask
            {
                sent.write { $0 += 1 }
                return session.send(request, completion: completion)
            }
        }
        let transport = CountingTransport()
        let fetcher = Fetcher(transport: transport, maxConcurrentRequests: 2)
        let key = uniqueKey("transport")
        let body = try await fetcher.body(of: try await TestServer.url("/hello/\(key)")).value(within: patience)
        #expect(text(body) == "hello \(key)")
        #expect(transport.sent.value == 1)
    }
}

/// A transport over a real session that counts the requests it sends and reports a cancelled
/// request at once, from `cancel()`, as some HTTP clients do (URLSession reports it later, from
/// its own queue). With it, a cancellation frees the fetcher's slot before `cancel()` returns.
final class ImmediateCancelTransport: HTTPTransport {
    let session: URLSession
    private let sentByURL = Protected<[URL: Int]>([:])

    init(session: URLSession) {
        self.session = session
    }

    /// How many requests for `url` were sent.
    func sent(_ url: URL) -> Int { sentByURL.read { $0[url] ?? 0 } }

    func send(_ request: URLRequest, completion: @escaping @Sendable (URLResult) -> Void) -> any HTTPTransportTask {
        if let url = request.url { sentByURL.write { $0[url, default: 0] += 1 } }
        let report = ReportOnce(completion)
        let task = session.send(request) { report($0) }
        return CancelReportingTask(task: task, report: report)
    }

    /// Calls a completion once, whichever of the cancellation and the session comes first.
    final class ReportOnce: Sendable {
        private let completion: Protected<(@Sendable (URLResult) -> Void)?>
        init(_ completion: @escaping @Sendable (URLResult) -> Void) { self.completion = Protected(completion) }
        func callAsFunction(_ result: URLResult) {
            let completion = self.completion.write { completion in
                defer { completion = nil }
                return completion
            }
            completion?(result)
        }
    }

    struct CancelReportingTask: HTTPTransportTask {
        let task: any HTTPTransportTask
        let report: ReportOnce
        func cancel() {
            task.cancel()
            report(.error(URLError(.cancelled), nil, nil))
        }
    }
}
