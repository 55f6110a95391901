import BatonFutures
import Foundation
import Testing

@testable import BatonHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

private func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

/// How `task` ended, within `patience`, or the test fails: a cancellation that does not reach
/// the request fails the test by name instead of hanging it. The wait does not go through
/// `Future.value`, whose cancellation is what these tests check.
func outcome<Value: Sendable>(
    of task: Task<Value, any Error>, sourceLocation: SourceLocation = #_sourceLocation
) async throws -> Result<Value, any Error> {
    let ended = Promise<Result<Value, any Error>?>()
    Task { ended.tryComplete(with: .success(await task.result)) }
    Task {
        try? await Task.sleep(for: patience)
        ended.tryComplete(with: .success(nil))
    }
    let outcome = await withCheckedContinuation { continuation in
        ended.future.whenSuccess { continuation.resume(returning: $0) }
    }
    guard let outcome else {
        Issue.record("the task did not end within \(patience) of its cancellation", sourceLocation: sourceLocation)
        throw CancellationError()
    }
    return outcome
}

/// The promises of the public surface: `body(of:)` gives the body or fails, `result(of:)` and
/// `results(of:timeout:)` give the whole outcome; a URL and a URLRequest are one parameter type;
/// an `async` caller cancels its request by cancelling the task that awaits `value`.
@Suite(.timeLimit(.minutes(1))) struct FetcherAPITests {
    /// The same three requests through both jobs: a 200, a 404 and a refused connection. The
    /// body is the 200's body and fails for the other two; the outcome is a value for all three.
    @Test func theBodyFailsWhereTheResultReportsTheOutcome() async throws {
        let fetcher = Fetcher(session: makeSession(), retryPolicy: .none)
        let key = uniqueKey("jobs")
        let hello = try await TestServer.url("/hello/\(key)")
        let missing = try await TestServer.url("/status/404/\(uniqueKey("jobs-missing"))")

        #expect(text(try await fetcher.body(of: hello).value(within: patience)) == "hello \(key)")
        do {
            _ = try await fetcher.body(of: missing).value(within: patience)
            Issue.record("a 404 must fail body(of:)")
        } catch let error as HTTPStatusError {
            #expect(error.statusCode == 404)
            #expect(text(error.data) == "status 404")
        }
        do {
            _ = try await fetcher.body(of: refusedURL).value(within: patience)
            Issue.record("a refused connection must fail body(of:)")
        } catch let error as URLError {
            #expect(error.code == .cannotConnectToHost)
        }

        let outcomes = [
            try await fetcher.result(of: hello).value(within: patience),
            try await fetcher.result(of: missing).value(within: patience),
            try await fetcher.result(of: refusedURL).value(within: patience),
        ]
        #expect(outcomes.map(\.statusCode) == [200, 404, nil])
        #expect(outcomes.map { $0.data.map(text) } == ["hello \(key)", "status 404", nil])
        #expect((outcomes[2].error as? URLError)?.code == .cannotConnectToHost)
        #expect(outcomes.map(\.isSuccess) == [true, false, false])
    }

    /// Every 2xx status is a body; the first status after them is not.
    @Test func everyTwoHundredStatusIsABody() async throws {
        let fetcher = Fetcher(session: makeSession(), retryPolicy: .none)
        for code in [200, 201, 299] {
            let url = try await TestServer.url("/status/\(code)/\(uniqueKey("2xx"))")
            #expect(text(try await fetcher.body(of: url).value(within: patience)) == "status \(code)")
        }
        do {
            _ = try await fetcher.body(of: try await TestServer.url("/status/300/\(uniqueKey("3xx"))")).value(
                within: patience)
            Issue.record("a 300 must fail body(of:)")
        } catch let error as HTTPStatusError {
            #expect(error.statusCode == 300)
        }
    }

    /// A URL is a GET of it; a request is sent as it is (the server records its method).
    @Test func aURLIsAGetAndARequestIsSentAsItIs() async throws {
        let server = try FaultServer.shared()
        let fetcher = Fetcher(session: makeSession(), retryPolicy: .none)
        let get = uniqueKey("get")
        #expect(text(try await fetcher.body(of: server.url("ok", get)).value(within: patience)) == "ok \(get)")
        #expect(server.methods(get) == ["GET"])

        for method in ["PUT", "POST", "DELETE"] {
            let key = uniqueKey(method.lowercased())
            var request = URLRequest(url: server.url("ok", key))
            request.httpMethod = method
            if method != "DELETE" { request.httpBody = Data("body".utf8) }
            #expect(try await fetcher.result(of: request).value(within: patience).statusCode == 200)
            #expect(text(try await fetcher.body(of: request).value(within: patience)) == "ok \(key)")
            #expect(server.methods(key) == [method, method])
        }

        let url = server.url("ok", uniqueKey("same"))
        #expect(url.fetchRequest == URLRequest(url: url))
        var request = URLRequest(url: url)
        request.httpMethod = "PUT"
        #expect(request.fetchRequest == request)
    }

    /// A URL and a GET request for it are the same fetch: in flight together, they make one
    /// request, and each caller gets the answer.
    @Test func aURLAndItsGetRequestShareOneRequest() async throws {
        let key = uniqueKey("one-get")
        let url = try await TestServer.url("/held/\(key)")
        let fetcher = Fetcher(session: makeSession(), retryPolicy: .none)
        let byURL = fetcher.body(of: url)
        let byRequest = fetcher.result(of: URLRequest(url: url))
        try await TestServer.shared.waitUntil("the request arrived") { TestServer.shared.inFlight(key) == 1 }
        TestServer.shared.release(key)
        #expect(text(try await byURL.value(within: patience)) == "held \(key)")
        #expect(try await byRequest.value(within: patience).data.map(text) == "held \(key)")
        #expect(TestServer.shared.hits(key) == 1)
    }

    /// A type of the caller's own can be fetched through its request.
    @Test func aConformingTypeIsFetchedThroughItsRequest() async throws {
        struct Endpoint: Fetchable {
            let base: URL
            let key: String
            var fetchRequest: URLRequest {
                var request = URLRequest(url: base.appendingPathComponent("ok").appendingPathComponent(key))
                request.httpMethod = "PUT"
                return request
            }
        }
        let server = try FaultServer.shared()
        let fetcher = Fetcher(session: makeSession(), retryPolicy: .none)
        let endpoint = Endpoint(base: URL(string: "http://127.0.0.1:\(server.port)")!, key: uniqueKey("endpoint"))
        #expect(text(try await fetcher.body(of: endpoint).value(within: patience)) == "ok \(endpoint.key)")
        #expect(server.methods(endpoint.key) == ["PUT"])
    }

    /// A batch of requests: one result per request in their order, each what `result(of:)`
    /// gives (a POST's 503 is not retried and is a response), and the deadline cancels only what
    /// is left.
    @Test func aBatchOfRequestsKeepsItsOrderAndItsDeadline() async throws {
        let slow = uniqueKey("batch-slow")
        let fast = uniqueKey("batch-fast")
        let posted = uniqueKey("batch-post")
        // The deadline is the fetcher's timer, held until every request but the slow one has
        // ended; the waits before retries run at once.
        let timer = RecordingTimer(holdingOnly: .seconds(3))
        let transport = CountingTransport(session: makeSession())
        let fetcher = Fetcher(
            transport: transport, maxConcurrentRequests: 6, retryPolicy: .init(attempts: 3, backoff: .none),
            requestTimeout: nil, retryTimer: timer.timer)
        var post = URLRequest(url: try await TestServer.url("/flaky/\(posted)?fail=1"))
        post.httpMethod = "POST"
        let requests = [
            URLRequest(url: try await TestServer.url("/held/\(slow)")),
            URLRequest(url: try await TestServer.url("/hello/\(fast)")),
            post,
            URLRequest(url: try await TestServer.url("/status/404/\(uniqueKey("batch-missing"))")),
            URLRequest(url: refusedURL),
        ]
        let batch = fetcher.results(of: requests, timeout: .seconds(3))
        // Seven attempts: one each, and three for the refused connection (a transient error);
        // six of them ended.
        try await TestServer.shared.waitUntil("every request but the slow one ended") {
            transport.sent == 7 && transport.handedOn == 6 && TestServer.shared.hits(slow) == 1
        }
        #expect(!batch.isCompleted)
        #expect(timer.delays.filter { $0 == .seconds(3) }.count == 1)
        timer.fireAll()
        let results = try await batch.value(within: patience)
        #expect(results.count == 5)
        #expect(results[0].error as? FutureError == .timedOut(after: .seconds(3)))
        #expect(results[1].data.map(text) == "hello \(fast)")
        #expect(results[2].statusCode == 503)
        #expect(results[3].statusCode == 404)
        #expect((results[4].error as? URLError)?.code == .cannotConnectToHost)
        #expect(TestServer.shared.hits(posted) == 1)
        TestServer.shared.release(slow)

        // Without a deadline, every result arrives, in order.
        let again = try await fetcher.results(of: Array(requests[1...3])).value(within: patience)
        #expect(again.map(\.statusCode) == [200, 200, 404])
        #expect(TestServer.shared.hits(posted) == 2)
        #expect(try await fetcher.results(of: [URL]()).value(within: patience).isEmpty)
    }

    /// Cancelling the task that awaits `value` cancels this caller's request at the server;
    /// another caller of the same URL keeps its own.
    @Test func cancellingTheAwaitingTaskCancelsTheRequest() async throws {
        let server = try FaultServer.shared()
        let key = uniqueKey("task")
        let url = server.url("stall", key)
        let fetcher = Fetcher(session: makeSession(), maxConcurrentRequests: 1, retryPolicy: .none)
        let task = Task { try await fetcher.body(of: url).value }
        try await server.waitUntil("the request is stalled") { server.hits(key) == 1 }
        task.cancel()
        let taskOutcome = try await outcome(of: task)
        #expect(throws: CancellationError.self) { try taskOutcome.get() }
        // The transfer is cancelled: the server sees the connection closed, and the slot is free.
        try await server.waitUntil("the client closed the connection") { server.closedByClient(key) == 1 }
        let sentinel = uniqueKey("after-task")
        #expect(
            text(try await fetcher.body(of: server.url("ok", sentinel)).value(within: patience)) == "ok \(sentinel)")
        #expect(server.hits(key) == 1)
    }

    /// Two tasks await the same GET; cancelling one leaves the other its answer.
    @Test func cancellingOneAwaitingTaskLeavesTheOthersTheirResult() async throws {
        let key = uniqueKey("task-leave")
        let url = try await TestServer.url("/held/\(key)")
        let fetcher = Fetcher(session: makeSession(), retryPolicy: .none)
        let leaving = Task { try await fetcher.body(of: url).value }
        let staying = Task { try await fetcher.result(of: url).value }
        try await TestServer.shared.waitUntil("the request arrived") { TestServer.shared.inFlight(key) == 1 }
        leaving.cancel()
        let leavingOutcome = try await outcome(of: leaving)
        #expect(throws: CancellationError.self) { try leavingOutcome.get() }
        TestServer.shared.release(key)
        #expect(try await staying.value.data.map(text) == "held \(key)")
        #expect(TestServer.shared.hits(key) == 1)
    }

    /// Cancelling the task that awaits a batch cancels the batch: the running request is
    /// cancelled and none of the queued ones is sent.
    @Test func cancellingTheTaskAwaitingABatchSendsNoneOfItsQueuedRequests() async throws {
        let server = try FaultServer.shared()
        let key = uniqueKey("task-batch")
        let urls = (0..<4).map { server.url("stall", key, "i=\($0)") }
        let fetcher = Fetcher(session: makeSession(), maxConcurrentRequests: 1, retryPolicy: .none)
        let task = Task { try await fetcher.results(of: urls).value }
        try await server.waitUntil("the first request is stalled") { server.hits(key) == 1 }
        #expect(fetcher.queuedRequests == 3)
        task.cancel()
        let taskOutcome = try await outcome(of: task)
        #expect(throws: CancellationError.self) { try taskOutcome.get() }
        try await server.waitUntil("the client closed the connection") { server.closedByClient(key) == 1 }
        // One slot, first in, first out: a queued request of the batch would reach the server
        // before this one.
        let sentinel = uniqueKey("task-batch-sentinel")
        #expect(
            text(try await fetcher.body(of: server.url("ok", sentinel)).value(within: patience)) == "ok \(sentinel)")
        #expect(fetcher.queuedRequests == 0)
        #expect(server.hits(key) == 1)
    }
}
