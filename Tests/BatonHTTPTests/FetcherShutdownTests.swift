import BatonCache
import BatonFutures
import BatonLocks
import BatonTestSupport
import Clocks
import Dispatch
import Foundation
import Testing

@testable import BatonHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

private func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

/// A transport that answers only when the test says: each request sent waits as an `Exchange`
/// until the test answers or fails it. A cancelled exchange reports at once, or, with
/// `holdsCancelled`, only when the test fails it, as a slow client would. With `answersAtOnce`
/// every request is answered `200 ok` from another thread as soon as it is sent.
final class ManualTransport: HTTPTransport {
    final class Exchange: HTTPTransportTask, Sendable {
        let request: URLRequest
        private let completion: Protected<(@Sendable (URLResult) -> Void)?>
        private let cancelledFlag = Protected(false)
        private let holdsCancelled: Bool

        init(_ request: URLRequest, holdsCancelled: Bool, completion: @escaping @Sendable (URLResult) -> Void) {
            self.request = request
            self.holdsCancelled = holdsCancelled
            self.completion = Protected(completion)
        }

        var isCancelled: Bool { cancelledFlag.value }
        var isReported: Bool { completion.read { $0 == nil } }

        /// Answers with `status` and `body`.
        func answer(_ status: Int = 200, _ body: String = "ok", headers: [String: String] = [:]) {
            let response = HTTPURLResponse(
                url: request.url!, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!
            report(.response(Data(body.utf8), response))
        }

        /// Reports `error`.
        func fail(_ error: any Error = URLError(.cancelled)) { report(.error(error, nil, nil)) }

        func cancel() {
            cancelledFlag.write { $0 = true }
            if !holdsCancelled { fail() }
        }

        private func report(_ result: URLResult) {
            let completion = completion.write { completion in
                defer { completion = nil }
                return completion
            }
            completion?(result)
        }
    }

    let holdsCancelled: Bool
    let answersAtOnce: Bool
    private let exchanges = Protected<[Exchange]>([])

    init(holdsCancelled: Bool = false, answersAtOnce: Bool = false) {
        self.holdsCancelled = holdsCancelled
        self.answersAtOnce = answersAtOnce
    }

    /// Every request sent, oldest first.
    var sent: [Exchange] { exchanges.value }

    /// Waits (at most 30 s) until `count` requests have been sent; returns them.
    func waitForSent(_ count: Int, sourceLocation: SourceLocation = #_sourceLocation) async -> [Exchange] {
        let arrived = await eventuallyHolds { self.sent.count >= count }
        #expect(arrived, "\(count) requests were not sent", sourceLocation: sourceLocation)
        return sent
    }

    func send(_ request: URLRequest, completion: @escaping @Sendable (URLResult) -> Void) -> any HTTPTransportTask {
        let exchange = Exchange(request, holdsCancelled: holdsCancelled, completion: completion)
        exchanges.write { $0.append(exchange) }
        if answersAtOnce { DispatchQueue.global().async { exchange.answer() } }
        return exchange
    }
}

/// `Fetcher.shutDown(gracePeriod:clock:)`: new requests refused, those taken answered within the
/// grace period, the rest cut off, and the call returning only when nothing is left. The grace
/// period runs on a manual clock; requests wait on a transport that answers when the test says,
/// or on the test server's held route, so nothing is inferred from how long anything took.
@Suite(.timeLimit(.minutes(1)), .offTheCooperativePool) struct FetcherShutdownTests {
    static let url = URL(string: "http://127.0.0.1:9/resource")!

    static func request(_ method: String, _ path: String = "/resource") -> URLRequest {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:9\(path)")!)
        request.httpMethod = method
        return request
    }

    /// A fetcher over a manual transport, with one GET of ``url`` sent and waiting for its
    /// answer: the transport, the fetcher, the caller's future and the request on the wire.
    static func oneRequestOnTheWire(holdsCancelled: Bool = false) async -> (
        ManualTransport, Fetcher, Future<URLResult>, ManualTransport.Exchange
    ) {
        let transport = ManualTransport(holdsCancelled: holdsCancelled)
        let fetcher = Fetcher(transport: transport, retryPolicy: .none)
        let running = fetcher.result(of: url)
        return (transport, fetcher, running, await transport.waitForSent(1)[0])
    }

    static func drainWaiters(of fetcher: Fetcher) -> Int {
        fetcher.lock.withLock { fetcher.machine.drainWaiterCount }
    }

    /// Polls until a shutdown of `fetcher` waits for it to drain.
    static func waitForShutdownToWait(_ fetcher: Fetcher, count: Int = 1) async -> Bool {
        await eventuallyHolds { drainWaiters(of: fetcher) >= count }
    }

    /// A shutdown of `fetcher` on `clock` in a task of its own, returning once it waits.
    static func shuttingDown(
        _ fetcher: Fetcher, gracePeriod: Duration = .seconds(10), clock: TestClock<Duration>,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async -> Task<Void, Never> {
        let task = Task { await fetcher.shutDown(gracePeriod: gracePeriod, clock: clock) }
        #expect(await waitForShutdownToWait(fetcher), "the shutdown never waited", sourceLocation: sourceLocation)
        return task
    }

    static func shutDownError(_ result: URLResult?) -> FetcherShutDownError? {
        guard case .error(let error, nil, nil)? = result else { return nil }
        return error as? FetcherShutDownError
    }

    // MARK: Refusing

    @Test func anIdleFetcherShutsDownAtOnceAndRefusesEveryRequestAfter() async throws {
        let transport = ManualTransport()
        let fetcher = Fetcher(transport: transport, retryPolicy: .none)
        #expect(!fetcher.isShutDown)
        await Task { await fetcher.shutDown(gracePeriod: .seconds(3600), clock: TestClock()) }.value(within: 30)
        #expect(fetcher.isShutDown)

        let get = try await fetcher.result(of: Self.url).value(within: patience)
        #expect(Self.shutDownError(get) == FetcherShutDownError(request: URLRequest(url: Self.url), reason: .refused))
        let post = Self.request("POST")
        let posted = try await fetcher.result(of: post).value(within: patience)
        #expect(Self.shutDownError(posted) == FetcherShutDownError(request: post, reason: .refused))
        await #expect(throws: FetcherShutDownError(request: URLRequest(url: Self.url), reason: .refused)) {
            _ = try await fetcher.body(of: Self.url).value(within: patience)
        }
        let batch = try await fetcher.results(of: [Self.url, Self.url]).value(within: patience)
        #expect(batch.map { Self.shutDownError($0)?.reason } == [.refused, .refused])
        #expect(transport.sent.isEmpty)
        #expect(fetcher.lock.withLock { fetcher.machine.unansweredCount } == 0)
    }

    @Test func anAnswerInTheCacheIsRefusedToo() async throws {
        let cache = MemoryCache<URL, Data>(countLimit: 10)
        cache.setValue(Data("cached".utf8), forKey: Self.url)
        let transport = ManualTransport()
        let fetcher = Fetcher(transport: transport, cache: cache, retryPolicy: .none)
        #expect(try await fetcher.body(of: Self.url).value(within: patience) == Data("cached".utf8))
        await Task { await fetcher.shutDown(gracePeriod: .zero, clock: TestClock()) }.value(within: 30)
        let result = try await fetcher.result(of: Self.url).value(within: patience)
        #expect(Self.shutDownError(result)?.reason == .refused)
        #expect(transport.sent.isEmpty)
    }

    @Test func theErrorSaysWhatHappenedToTheRequest() {
        let refused = FetcherShutDownError(request: Self.request("POST"), reason: .refused)
        #expect(refused.description.contains("POST http://127.0.0.1:9/resource was refused"))
        #expect(refused.description.contains("takes no new requests"))
        let cut = FetcherShutDownError(request: URLRequest(url: Self.url), reason: .gracePeriodEnded)
        #expect(cut.description.contains("GET http://127.0.0.1:9/resource was cancelled"))
        #expect(cut.description.contains("grace period ended"))
        #expect(refused != FetcherShutDownError(request: Self.request("POST"), reason: .gracePeriodEnded))
    }

    // MARK: The grace period

    @Test func aRunningRequestIsAnsweredDuringTheGracePeriodAndNewOnesAreRefused() async throws {
        let (transport, fetcher, running, exchange) = await Self.oneRequestOnTheWire()
        let clock = TestClock()
        let shutdown = await Self.shuttingDown(fetcher, clock: clock)
        #expect(fetcher.isShutDown)

        // While it waits: refused, and nothing more is sent.
        let late = try await fetcher.result(of: Self.request("PUT")).value(within: patience)
        #expect(Self.shutDownError(late)?.reason == .refused)
        #expect(transport.sent.count == 1)
        #expect(!running.isCompleted)

        exchange.answer(200, "answered")
        let result = try await running.value(within: patience)
        #expect(result.data.map(text) == "answered")
        await shutdown.value(within: 30)
        #expect(!exchange.isCancelled)
    }

    @Test func queuedRequestsAreSentAndAnsweredDuringTheGracePeriod() async throws {
        let transport = ManualTransport()
        let fetcher = Fetcher(transport: transport, maxConcurrentRequests: 1, retryPolicy: .none)
        let first = fetcher.result(of: Self.request("GET", "/first"))
        let second = fetcher.result(of: Self.request("POST", "/second"))
        _ = await transport.waitForSent(1)
        #expect(fetcher.queuedRequests == 1)
        let clock = TestClock()
        let shutdown = await Self.shuttingDown(fetcher, clock: clock)

        transport.sent[0].answer(200, "first")
        let sent = await transport.waitForSent(2)
        #expect(sent[1].request.url?.path == "/second")
        sent[1].answer(201, "second")
        #expect(try await first.value(within: patience).data.map(text) == "first")
        #expect(try await second.value(within: patience).statusCode == 201)
        await shutdown.value(within: 30)
    }

    @Test func aRetryDuringTheGracePeriodIsSent() async throws {
        let transport = ManualTransport()
        let fetcher = Fetcher(transport: transport, retryPolicy: .init(attempts: 3, backoff: .none))
        let result = fetcher.result(of: Self.url)
        _ = await transport.waitForSent(1)
        let shutdown = await Self.shuttingDown(fetcher, clock: TestClock())
        transport.sent[0].answer(503, "busy")
        let retried = await transport.waitForSent(2)
        retried[1].answer(200, "recovered")
        #expect(try await result.value(within: patience).data.map(text) == "recovered")
        await shutdown.value(within: 30)
    }

    @Test func whenTheGracePeriodEndsRunningRequestsAreCutOffAndQueuedOnesAreNeverSent() async throws {
        let transport = ManualTransport()
        let fetcher = Fetcher(transport: transport, maxConcurrentRequests: 1, retryPolicy: .none)
        let running = fetcher.result(of: Self.url)
        let queuedRequest = Self.request("DELETE", "/queued")
        let queued = fetcher.result(of: queuedRequest)
        let queuedBody = fetcher.body(of: Self.request("GET", "/queued-body"))
        let exchange = await transport.waitForSent(1)[0]
        let clock = TestClock()
        let shutdown = await Self.shuttingDown(fetcher, gracePeriod: .seconds(10), clock: clock)

        await clock.advance(by: .seconds(9))
        #expect(!exchange.isCancelled)
        await clock.advance(by: .seconds(1))
        let cut = try await running.value(within: patience)
        #expect(
            Self.shutDownError(cut)
                == FetcherShutDownError(request: URLRequest(url: Self.url), reason: .gracePeriodEnded))
        let cutQueued = try await queued.value(within: patience)
        #expect(
            Self.shutDownError(cutQueued) == FetcherShutDownError(request: queuedRequest, reason: .gracePeriodEnded))
        await #expect(throws: FetcherShutDownError.self) { _ = try await queuedBody.value(within: patience) }
        await shutdown.value(within: 30)

        #expect(exchange.isCancelled)
        #expect(transport.sent.count == 1, "a queued request was sent after the grace period")
        #expect(fetcher.lock.withLock { fetcher.machine.running } == 0)
        #expect(fetcher.queuedRequests == 0)
    }

    @Test func aRequestWaitingToBeRetriedIsCutOff() async throws {
        let transport = ManualTransport()
        let fetcher = Fetcher(transport: transport, retryPolicy: .init(attempts: 3, backoff: .constant(.seconds(3600))))
        let result = fetcher.result(of: Self.url)
        _ = await transport.waitForSent(1)
        transport.sent[0].answer(503, "busy")
        // The request now waits an hour for its retry.
        #expect(await eventuallyHolds { fetcher.lock.withLock { fetcher.machine.running } == 0 })
        let clock = TestClock()
        let shutdown = await Self.shuttingDown(fetcher, gracePeriod: .seconds(1), clock: clock)
        #expect(!result.isCompleted)
        await clock.advance(by: .seconds(1))
        #expect(Self.shutDownError(try await result.value(within: patience))?.reason == .gracePeriodEnded)
        await shutdown.value(within: 30)
        #expect(transport.sent.count == 1)
    }

    @Test func coalescedCallersAreAllCutOff() async throws {
        let transport = ManualTransport()
        let fetcher = Fetcher(transport: transport, retryPolicy: .none)
        let callers = (0..<3).map { _ in fetcher.result(of: Self.url) }
        let exchange = await transport.waitForSent(1)[0]
        let clock = TestClock()
        let shutdown = await Self.shuttingDown(fetcher, gracePeriod: .seconds(1), clock: clock)
        await clock.advance(by: .seconds(1))
        for caller in callers {
            #expect(Self.shutDownError(try await caller.value(within: patience))?.reason == .gracePeriodEnded)
        }
        await shutdown.value(within: 30)
        #expect(exchange.isCancelled)
        #expect(transport.sent.count == 1)
    }

    // MARK: When it returns

    @Test func itReturnsOnlyOnceTheTransportHasReportedTheCancelledRequests() async throws {
        let (_, fetcher, running, exchange) = await Self.oneRequestOnTheWire(holdsCancelled: true)
        let clock = TestClock()
        let returned = Protected(false)
        let shutdown = Task {
            await fetcher.shutDown(gracePeriod: .seconds(1), clock: clock)
            returned.write { $0 = true }
        }
        #expect(await Self.waitForShutdownToWait(fetcher))
        await clock.advance(by: .seconds(1))
        // The caller has its answer at once, but the request is still on the wire.
        #expect(Self.shutDownError(try await running.value(within: patience))?.reason == .gracePeriodEnded)
        #expect(exchange.isCancelled)
        #expect(await Self.waitForShutdownToWait(fetcher), "the shutdown did not wait for the transport")
        #expect(!returned.value)

        exchange.fail()
        await shutdown.value(within: 30)
        #expect(returned.value)
    }

    @Test func itDoesNotReturnWhileARequestRuns() async throws {
        let (_, fetcher, running, exchange) = await Self.oneRequestOnTheWire()
        let returned = Protected(false)
        let shutdown = Task {
            await fetcher.shutDown(gracePeriod: .seconds(10), clock: TestClock())
            returned.write { $0 = true }
        }
        #expect(await Self.waitForShutdownToWait(fetcher))
        #expect(!returned.value)
        exchange.answer()
        _ = try await running.value(within: patience)
        await shutdown.value(within: 30)
        #expect(returned.value)
    }

    @Test func cancellingTheShutdownEndsTheGracePeriodAtOnce() async throws {
        let (_, fetcher, running, exchange) = await Self.oneRequestOnTheWire()
        let shutdown = await Self.shuttingDown(fetcher, gracePeriod: .seconds(3600), clock: TestClock())
        shutdown.cancel()
        #expect(Self.shutDownError(try await running.value(within: patience))?.reason == .gracePeriodEnded)
        await shutdown.value(within: 30)
        #expect(exchange.isCancelled)
    }

    @Test func aSecondShutdownWaitsAsTheFirstDoes() async throws {
        let (_, fetcher, running, exchange) = await Self.oneRequestOnTheWire()
        let clock = TestClock()
        let first = await Self.shuttingDown(fetcher, clock: clock)
        let second = Task { await fetcher.shutDown(gracePeriod: .seconds(10), clock: clock) }
        #expect(await Self.waitForShutdownToWait(fetcher, count: 2))
        exchange.answer()
        _ = try await running.value(within: patience)
        await first.value(within: 30)
        await second.value(within: 30)
        #expect(Self.drainWaiters(of: fetcher) == 0)
    }

    @Test func aRequestCancelledByItsCallerDuringTheGracePeriodStillEndsTheWait() async throws {
        let transport = ManualTransport()
        let fetcher = Fetcher(transport: transport, retryPolicy: .none)
        let running = fetcher.result(of: Self.url)
        _ = await transport.waitForSent(1)
        let shutdown = await Self.shuttingDown(fetcher, clock: TestClock())
        running.cancel()
        await #expect(throws: CancellationError.self) { _ = try await running.value(within: patience) }
        await shutdown.value(within: 30)
    }

    // MARK: Races and the real server

    @Test func everyRequestRacingTheShutdownIsAnsweredOrRefusedNeverLost() async throws {
        let transport = ManualTransport()
        let fetcher = Fetcher(transport: transport, maxConcurrentRequests: 4, retryPolicy: .none)
        let perThread = 200
        let futures = Protected<[Future<URLResult>]>([])
        let answering = Thread {
            // Answers whatever is sent until every request has its answer (for a minute at most).
            let deadline = Date().addingTimeInterval(60)
            var answered = 0
            while Date() < deadline {
                let sent = transport.sent
                for exchange in sent.dropFirst(answered) { exchange.answer() }
                answered = sent.count
                if futures.read({ $0.count == 4 * perThread && $0.allSatisfy(\.isCompleted) }) { break }
                usleep(100)
            }
        }
        answering.start()
        let shutdown = Protected<Task<Void, Never>?>(nil)
        raceThreads(5) { index in
            if index == 4 {
                // Once requests are coming in, so that the shutdown begins among them.
                while futures.read({ $0.count }) < perThread { usleep(10) }
                shutdown.write {
                    $0 = Task { await fetcher.shutDown(gracePeriod: .seconds(3600), clock: TestClock()) }
                }
                return
            }
            for request in 0..<perThread {
                let future = fetcher.result(
                    of: Self.request(request.isMultiple(of: 2) ? "GET" : "POST", "/\(index)/\(request)"))
                futures.write { $0.append(future) }
            }
        }
        var answered = 0
        var refused = 0
        for future in futures.value {
            let result = try await future.value(within: patience)
            if Self.shutDownError(result)?.reason == .refused {
                refused += 1
            } else if result.statusCode == 200 {
                answered += 1
            }
        }
        #expect(answered + refused == 4 * perThread)
        #expect(answered == transport.sent.count, "a request was sent and its caller not answered, or the reverse")
        await shutdown.value!.value(within: 30)
    }

    @Test func overARealSessionTheHeldRequestIsAnsweredAndTheQueuedOneCutOff() async throws {
        let server = TestServer.shared
        let key = uniqueKey("shutdown")
        let fetcher = Fetcher(session: makeSession(), maxConcurrentRequests: 1, retryPolicy: .none)
        let held = fetcher.body(of: try await TestServer.url("/held/\(key)"))
        let queuedURL = try await TestServer.url("/hello/\(key)-queued")
        let queued = fetcher.result(of: queuedURL)
        try await server.waitUntil("the request is held") { server.inFlight(key) == 1 }
        let clock = TestClock()
        let shutdown = await Self.shuttingDown(fetcher, gracePeriod: .seconds(5), clock: clock)
        server.release(key)
        #expect(text(try await held.value(within: patience)) == "held \(key)")
        // The queued request got the freed slot and was answered, in the grace period.
        #expect(try await queued.value(within: patience).data.map(text) == "hello \(key)-queued")
        await shutdown.value(within: 30)
        #expect(Self.shutDownError(try await fetcher.result(of: queuedURL).value(within: patience))?.reason == .refused)
        #expect(server.hits("\(key)-queued") == 1)
    }

    // MARK: cancelAll

    @Test func cancelAllCancelsRequestsOfEveryMethod() async throws {
        let transport = ManualTransport()
        let fetcher = Fetcher(transport: transport, maxConcurrentRequests: 2, retryPolicy: .none)
        let post = fetcher.result(of: Self.request("POST"))
        let get = fetcher.result(of: Self.url)
        let queued = fetcher.result(of: Self.request("PATCH"))
        let sent = await transport.waitForSent(2)
        fetcher.cancelAll()
        for future in [post, get, queued] {
            await #expect(throws: CancellationError.self) { _ = try await future.value(within: patience) }
        }
        #expect(sent.allSatisfy { $0.isCancelled })
        #expect(transport.sent.count == 2, "a queued request was sent after cancelAll()")
    }
}
