import BatonFutures
import BatonHTTPTestSupport
import BatonLocks
import Foundation
import Testing

@testable import BatonHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

private func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

/// A retry timer that records every wait asked of it. It runs the retry at once (the test
/// observes the policy, not the clock), or holds it until ``fireAll()`` when `holding`; or holds
/// only the waits of one length (a batch's deadline) and runs the others at once.
final class RecordingTimer: Sendable {
    private let asked = Protected<[Duration]>([])
    private let held = Protected<[@Sendable () -> Void]>([])
    private let holds: @Sendable (Duration) -> Bool

    init(holding: Bool = false) {
        self.holds = { _ in holding }
    }

    init(holdingOnly length: Duration) {
        self.holds = { $0 == length }
    }

    var delays: [Duration] { asked.value }
    var heldCount: Int { held.read { $0.count } }

    var timer: RetryTimer {
        RetryTimer { delay, body in
            self.asked.write { $0.append(delay) }
            if self.holds(delay) {
                self.held.write { $0.append(body) }
            } else {
                DispatchQueue.global().async(execute: body)
            }
        }
    }

    func fireAll() {
        let bodies = held.write { held in
            defer { held = [] }
            return held
        }
        for body in bodies { body() }
    }
}

/// A transport over a real client that counts what it sends and how many requests it has out
/// at once (and the most ever), so the concurrency bound is checked where requests leave; for
/// each URL, how many answers the session delivered (results other than a cancellation); and how
/// many results the fetcher has been handed and has finished taking.
final class CountingTransport: HTTPTransport {
    let transport: any HTTPTransport
    private struct Counts {
        var sent = 0
        var out = 0
        var maxOut = 0
        var delivered: [URL: Int] = [:]
        var handedOn = 0
    }
    private let counts = Protected(Counts())

    init(_ transport: any HTTPTransport) {
        self.transport = transport
    }

    convenience init(session: URLSession) {
        self.init(session as any HTTPTransport)
    }

    var sent: Int { counts.read { $0.sent } }
    var out: Int { counts.read { $0.out } }
    var maxOut: Int { counts.read { $0.maxOut } }
    func delivered(_ url: URL) -> Int { counts.read { $0.delivered[url] ?? 0 } }
    /// Results whose completion handler, the fetcher's, has returned.
    var handedOn: Int { counts.read { $0.handedOn } }

    func send(_ request: URLRequest, completion: @escaping @Sendable (URLResult) -> Void) -> any HTTPTransportTask {
        counts.write { counts in
            counts.sent += 1
            counts.out += 1
            counts.maxOut = max(counts.maxOut, counts.out)
        }
        return transport.send(request) { result in
            let cancelled = (result.error as? URLError)?.code == .cancelled
            self.counts.write { counts in
                counts.out -= 1
                if !cancelled, let url = request.url { counts.delivered[url, default: 0] += 1 }
            }
            completion(result)
            self.counts.write { $0.handedOn += 1 }
        }
    }
}

/// A transport that, as a lenient client might, hands on a body cut to `keep` bytes as if it
/// were complete.
final class TruncatingTransport: HTTPTransport {
    let transport: any HTTPTransport
    let keep: Int
    let sent = Protected(0)

    init(_ transport: any HTTPTransport, keep: Int) {
        self.transport = transport
        self.keep = keep
    }

    func send(_ request: URLRequest, completion: @escaping @Sendable (URLResult) -> Void) -> any HTTPTransportTask {
        sent.write { $0 += 1 }
        return transport.send(request) { result in
            guard case .response(let data, let response) = result else { return completion(result) }
            completion(.response(data.prefix(self.keep), response))
        }
    }
}

private func runningTasks(of session: URLSession) async -> Int {
    await withCheckedContinuation { continuation in
        session.getAllTasks { tasks in continuation.resume(returning: tasks.filter { $0.state == .running }.count) }
    }
}

private func lostConnection(_ error: (any Error)?) -> Bool {
    (error as? URLError)?.code == .networkConnectionLost
}

/// The fetcher against a server that misbehaves, over every transport (`TransportKind`): each
/// test runs once over `URLSession` and, with the `AsyncHTTPClient` trait, once over `HTTPClient`.
@Suite(.timeLimit(.minutes(1))) struct FaultTests {
    /// Faults that end an attempt without a usable response, and the error each gives.
    static let brokenAttempts = ["reset-headers", "reset-body", "short", "stall"]

    @Test(arguments: TransportKind.allCases, brokenAttempts)
    func aFaultWithoutRetriesIsAnErrorNeverABody(_ kind: TransportKind, _ fault: String) async throws {
        let server = try FaultServer.shared()
        let key = uniqueKey(fault)
        // Only the stall needs the timeout, and it always runs into it; the other faults must be
        // reported as what they are however long a loaded machine takes, so they get none. The
        // stall's request must reach the server before the timeout: a second, not less.
        let fetcher = Fetcher(
            transport: kind.make(), retryPolicy: .none, requestTimeout: fault == "stall" ? .seconds(1) : nil)
        let result = try await fetcher.result(of: server.url(fault, key)).value(within: patience)
        #expect(!result.isSuccess)
        #expect(result.data == nil)
        if fault == "stall" {
            #expect(result.error as? FutureError == .timedOut(after: .seconds(1)))
            try await server.waitUntil("the client closed the stalled connection") { server.closedByClient(key) == 1 }
        } else {
            #expect(lostConnection(result.error))
        }
        #expect(server.hits(key) == 1)
        await #expect(throws: (any Error).self) {
            try await fetcher.body(of: server.url(fault, key)).value(within: patience)
        }
    }

    static let transientFaults = [
        ("reset-headers", ""), ("reset-body", ""), ("short", ""), ("stall", ""), ("status", "&code=503"),
        ("status", "&code=429"), ("status", "&code=502"), ("status", "&code=504"), ("status", "&code=408"),
    ]

    @Test(arguments: TransportKind.allCases, transientFaults)
    func transientFaultsOfIdempotentRequestsAreRetried(_ kind: TransportKind, _ fault: (String, String)) async throws {
        let (fault, query) = fault
        let server = try FaultServer.shared()
        let key = uniqueKey(fault)
        // The stalls end only by the timeout, and the third attempt must still beat it on a
        // loaded machine: a generous one, and none where no attempt stalls.
        let fetcher = Fetcher(
            transport: kind.make(), retryPolicy: .init(attempts: 3, backoff: .constant(.milliseconds(1))),
            requestTimeout: fault == "stall" ? .seconds(3) : nil)
        let body = try await fetcher.body(of: server.url(fault, key, "fail=2" + query)).value(within: patience)
        #expect(text(body) == "ok \(key)")
        #expect(server.hits(key) == 3)
    }

    static let nonIdempotentFaults = ["POST", "PATCH"].flatMap { method in
        ["reset-headers", "reset-body", "short"].map { (method, $0) }
    }

    @Test(arguments: TransportKind.allCases, nonIdempotentFaults)
    func nonIdempotentRequestsAreSentOnce(_ kind: TransportKind, _ methodAndFault: (String, String)) async throws {
        let (method, fault) = methodAndFault
        let server = try FaultServer.shared()
        let key = uniqueKey("\(method)-\(fault)")
        let fetcher = Fetcher(transport: kind.make(), retryPolicy: .init(attempts: 3, backoff: .none))
        var request = URLRequest(url: server.url(fault, key, "fail=1"))
        request.httpMethod = method
        request.httpBody = Data("payload".utf8)
        let result = try await fetcher.result(of: request).value(within: patience)
        #expect(lostConnection(result.error))
        #expect(server.methods(key) == [method])
    }

    @Test(arguments: TransportKind.allCases)
    func nonTransientStatusesAreNotRetried(_ kind: TransportKind) async throws {
        let server = try FaultServer.shared()
        let key = uniqueKey("status-400")
        let fetcher = Fetcher(transport: kind.make(), retryPolicy: .init(attempts: 3, backoff: .none))
        let result = try await fetcher.result(of: server.url("status", key, "code=400&retry-after=0")).value(
            within: patience)
        #expect(result.statusCode == 400)
        #expect(server.hits(key) == 1)
    }

    /// (status, Retry-After as sent, cap, the wait the retry must ask for). The backoff is 5 ms.
    static let retryAfterCases: [(Int, String, Duration, Duration)] = [
        (503, "7", .seconds(30), .seconds(7)),
        (429, "120", .seconds(2), .seconds(2)),
        (503, "0", .seconds(30), .milliseconds(5)),
        (429, "Fri,%2031%20Dec%202100%2023:59:59%20GMT", .seconds(3), .seconds(3)),
        (503, "Sun,%2006%20Nov%201994%2008:49:37%20GMT", .seconds(30), .milliseconds(5)),
        (503, "soon", .seconds(30), .milliseconds(5)),
    ]

    @Test(arguments: TransportKind.allCases, retryAfterCases)
    func retryAfterSetsTheWaitUpToTheCap(_ kind: TransportKind, _ retryAfter: (Int, String, Duration, Duration))
        async throws
    {
        let (status, header, cap, wait) = retryAfter
        let server = try FaultServer.shared()
        let key = uniqueKey("retry-after")
        let timer = RecordingTimer()
        let fetcher = Fetcher(
            transport: kind.make(), maxConcurrentRequests: 2,
            retryPolicy: .init(attempts: 2, backoff: .constant(.milliseconds(5)), maximumRetryAfter: cap),
            requestTimeout: nil, retryTimer: timer.timer)
        let url = server.url("status", key, "fail=1&code=\(status)&retry-after=\(header)")
        #expect(text(try await fetcher.body(of: url).value(within: patience)) == "ok \(key)")
        #expect(timer.delays == [wait])
        #expect(server.hits(key) == 2)
    }

    @Test(arguments: TransportKind.allCases)
    func retryAfterIsWaitedBeforeTheNextAttempt(_ kind: TransportKind) async throws {
        // The real timer: the server's own clock sees the second attempt no sooner than the
        // wait (a lower bound, which holds however slow the machine is).
        let server = try FaultServer.shared()
        let key = uniqueKey("retry-after-real")
        let fetcher = Fetcher(
            transport: kind.make(),
            retryPolicy: .init(attempts: 2, backoff: .none, maximumRetryAfter: .milliseconds(50)))
        let url = server.url("status", key, "fail=1&code=503&retry-after=3600")
        #expect(text(try await fetcher.body(of: url).value(within: patience)) == "ok \(key)")
        let gaps = server.gaps(key)
        #expect(gaps.count == 1)
        #expect(gaps.allSatisfy { $0 >= .milliseconds(50) })
    }

    @Test func retryAfterReadsEveryHTTPDateForm() {
        let now = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT
        #expect(RetryAfter.delay("Sun, 06 Nov 1994 08:50:07 GMT", now: now) == .seconds(30))
        #expect(RetryAfter.delay("Sunday, 06-Nov-94 08:49:47 GMT", now: now) == .seconds(10))
        #expect(RetryAfter.delay("Sun Nov  6 08:49:42 1994", now: now) == .seconds(5))
        #expect(RetryAfter.delay("Sun, 06 Nov 1994 08:00:00 GMT", now: now) == .zero)
        #expect(RetryAfter.delay(" 42 ", now: now) == .seconds(42))
        #expect(RetryAfter.delay("99999999999999999999999", now: now) == .seconds(Int64.max))
        #expect(RetryAfter.delay("-5", now: now) == nil)
        #expect(RetryAfter.delay("", now: now) == nil)
        #expect(RetryAfter.delay("tomorrow", now: now) == nil)
    }

    @Test func aContentLengthIsReadWithOrWithoutBlanksAroundIt() throws {
        #expect(URLResult.contentLength("1024") == 1024)
        #expect(URLResult.contentLength(" 1024\t") == 1024)
        #expect(URLResult.contentLength("\t 7") == 7)
        #expect(URLResult.contentLength("10 24") == nil)
        #expect(URLResult.contentLength("") == nil)
        #expect(URLResult.contentLength("ten") == nil)
        // A padded header still marks a cut body as lost.
        let url = try #require(URL(string: "http://127.0.0.1/padded"))
        let padded = ["Content-Length": " 10 "]
        let response = try #require(
            HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: padded))
        let cut = URLResult.response(Data("abc".utf8), response).checkingLength(method: "GET")
        #expect(lostConnection(cut.error))
        let whole = URLResult.response(Data("0123456789".utf8), response).checkingLength(method: "GET")
        #expect(whole.isSuccess)
    }

    @Test(arguments: TransportKind.allCases)
    func aBodyShorterThanItsContentLengthIsNeverASuccess(_ kind: TransportKind) async throws {
        // Through a transport that hands a cut body on as complete: the fetcher checks the length
        // itself, and retries (the connection was lost, and a GET is idempotent).
        let server = try FaultServer.shared()
        let key = uniqueKey("truncated")
        let transport = TruncatingTransport(kind.make(), keep: 3)
        let fetcher = Fetcher(transport: transport, retryPolicy: .init(attempts: 2, backoff: .none))
        let result = try await fetcher.result(of: server.url("ok", key)).value(within: patience)
        #expect(lostConnection(result.error))
        #expect(!result.isSuccess)
        #expect(transport.sent.value == 2)
        #expect(server.hits(key) == 2)
        // A HEAD has no body to check.
        var head = URLRequest(url: server.url("ok", uniqueKey("head")))
        head.httpMethod = "HEAD"
        #expect(try await fetcher.result(of: head).value(within: patience).isSuccess)
    }

    @Test(arguments: TransportKind.allCases)
    func aSlowDripWithinTheTimeoutArrivesWhole(_ kind: TransportKind) async throws {
        let server = try FaultServer.shared()
        let key = uniqueKey("drip")
        let fetcher = Fetcher(transport: kind.make(), retryPolicy: .none, requestTimeout: .seconds(30))
        let body = try await fetcher.body(of: server.url("drip", key, "bytes=20&interval=5")).value(within: patience)
        #expect(body == Data(repeating: UInt8(ascii: "d"), count: 20))
    }

    @Test(arguments: TransportKind.allCases)
    func aDripPastTheTimeoutTimesOutAndHangsUp(_ kind: TransportKind) async throws {
        let server = try FaultServer.shared()
        let key = uniqueKey("drip-forever")
        // Each attempt must reach the server before its timeout, or the server has no request to
        // count: a second, not less, for a loaded machine (the body drips for ever either way).
        let fetcher = Fetcher(
            transport: kind.make(), retryPolicy: .init(attempts: 2, backoff: .none), requestTimeout: .seconds(1))
        let result = try await fetcher.result(of: server.url("drip", key, "forever")).value(within: patience)
        #expect(result.error as? FutureError == .timedOut(after: .seconds(1)))
        #expect(server.hits(key) == 2)
        try await server.waitUntil("both connections were closed") { server.closedByClient(key) == 2 }
    }

    @Test(arguments: TransportKind.allCases)
    func keepAliveConnectionsClosedBetweenRequestsAreNotFailures(_ kind: TransportKind) async throws {
        let server = try FaultServer.shared()
        let key = uniqueKey("close")
        // The server closes each connection after its answer, without saying so. Over URLSession
        // libcurl sends a request that finds its kept-alive connection dead once more, on a new
        // one, before the fetcher sees anything: no retry is needed. Over AsyncHTTPClient the
        // transport does so only when nothing was written; a request written just as the server
        // closed ends in `.networkConnectionLost`, which the fetcher's retries take. Either way
        // every GET succeeds, and the server sees each exactly once.
        let retries: Fetcher.RetryPolicy = kind == .urlSession ? .none : .init(attempts: 3, backoff: .none)
        let fetcher = Fetcher(transport: kind.make(), maxConcurrentRequests: 2, retryPolicy: retries)
        for _ in 0..<20 {
            #expect(text(try await fetcher.body(of: server.url("close", key)).value(within: patience)) == "ok \(key)")
        }
        #expect(server.hits(key) == 20)
    }

    // MARK: Cancellation in the middle of each fault

    /// Cancels a fetch while it is stalled, dripping, queued behind one, or waiting to retry,
    /// then checks that nothing is left: the connection is closed, nothing is queued, no retry
    /// is sent later, and the one slot serves the next request.
    @Test(arguments: TransportKind.allCases, ["stall", "drip", "queued", "retry-wait"])
    func cancellingInTheMiddleOfAFaultLeavesNothingBehind(_ kind: TransportKind, _ phase: String) async throws {
        let server = try FaultServer.shared()
        let key = uniqueKey("cancel-\(phase)")
        let timer = RecordingTimer(holding: true)
        let transport = CountingTransport(kind.make())
        let fetcher = Fetcher(
            transport: transport, maxConcurrentRequests: 1,
            retryPolicy: .init(attempts: 3, backoff: .constant(.milliseconds(1))), requestTimeout: .seconds(30),
            retryTimer: timer.timer)
        let blocker = uniqueKey("blocker")
        var blocking: Future<Data>?
        let victim: Future<Data>
        switch phase {
        case "stall":
            victim = fetcher.body(of: server.url("stall", key))
            try await server.waitUntil("the request is stalled") { server.answering(key) == 1 }
        case "drip":
            victim = fetcher.body(of: server.url("drip", key, "forever&interval=5"))
            try await server.waitUntil("the body is dripping") { server.answering(key) == 1 }
        case "queued":
            blocking = fetcher.body(of: server.url("stall", blocker))
            try await server.waitUntil("the slot is taken") { server.answering(blocker) == 1 }
            victim = fetcher.body(of: server.url("ok", key))
            #expect(fetcher.queuedRequests == 1)
        default:
            victim = fetcher.body(of: server.url("status", key, "code=503"))
            try await server.waitUntil("the retry waits") { timer.heldCount == 1 }
        }
        victim.cancel()
        await #expect(throws: CancellationError.self) { try await victim.value(within: patience) }
        blocking?.cancel()
        #expect(fetcher.queuedRequests == 0)
        switch phase {
        case "stall", "drip":
            try await server.waitUntil("the connection was closed") { server.closedByClient(key) == 1 }
        case "queued":
            try await server.waitUntil("the blocker was closed") { server.closedByClient(blocker) == 1 }
        default:
            // The wait was cut short: firing its timer now sends nothing.
            timer.fireAll()
        }
        try await server.waitUntil("the transport has nothing out") { transport.out == 0 }
        let sentBefore = transport.sent
        let sentinel = uniqueKey("sentinel")
        #expect(
            text(try await fetcher.body(of: server.url("ok", sentinel)).value(within: patience)) == "ok \(sentinel)")
        #expect(transport.sent == sentBefore + 1)
        #expect(server.hits(key) == (phase == "queued" ? 0 : 1))
        #expect(transport.maxOut == 1)
    }

    // MARK: Many faults, then good requests

    @Test(arguments: TransportKind.allCases)
    func aThousandFaultsLeakNothingAndTheNextHundredSucceed(_ kind: TransportKind) async {
        // In a process of its own: URLSession on Linux now and then crashes in Dispatch under
        // this many connection resets (see `exitWhenDispatchCrashes()`). Such a crash is the
        // platform's known issue, and the run is made once more; a second one, or any other
        // ending but success, fails the test. Every check runs in the child and is reported here.
        // Over AsyncHTTPClient no such crash is known, and none is forgiven.
        for attempt in 1...2 {
            let dispatchCrashed = Protected(false)
            await withKnownIssue("URLSession's process crashed in Dispatch", isIntermittent: true) {
                await #expect(processExitsWith: .success) { [kind] in
                    exitWhenDispatchCrashes()
                    do {
                        try await thousandFaultsLeakNothingAndTheNextHundredSucceed(over: kind)
                    } catch {
                        Issue.record(error, "the thousand faults threw")
                    }
                }
            } matching: { issue in
                let platform = kind == .urlSession && attempt == 1 && isDispatchCrash(issue)
                if platform { dispatchCrashed.write { $0 = true } }
                return platform
            }
            if !dispatchCrashed.value { return }
        }
    }
}

/// A thousand requests that each meet a fault (both attempts), then a hundred that succeed,
/// through a fetcher of four slots over a real client: every result is the fault's, nothing is
/// left out at the transport or the session, and every slot is free again.
private func thousandFaultsLeakNothingAndTheNextHundredSucceed(over kind: TransportKind) async throws {
    let server = try FaultServer.shared()
    let limit = 4
    let transport = CountingTransport(kind.make())
    let fetcher = Fetcher(
        transport: transport, maxConcurrentRequests: limit,
        retryPolicy: .init(attempts: 2, backoff: .constant(.milliseconds(1)), maximumRetryAfter: .milliseconds(1)),
        requestTimeout: .seconds(3))
    let faults: [(fault: String, query: String)] = [
        ("reset-headers", ""), ("reset-body", ""), ("short", ""), ("status", "code=503&retry-after=1"),
        ("status", "code=429&retry-after=1"), ("status", "code=502"), ("reset-headers", ""), ("short", ""),
        ("reset-body", ""), ("status", "code=504"),
    ]
    let run = uniqueKey("thousand")
    var urls: [URL] = []
    // One stall in 250: each costs both attempts' timeout. The timeout is generous so that no
    // other fault runs into it on a loaded machine (one that did would be reported as a
    // timeout, not as the fault it is).
    let fault = { (index: Int) in index % 250 == 249 ? (fault: "stall", query: "") : faults[index % faults.count] }
    for index in 0..<1000 {
        let fault = fault(index)
        urls.append(server.url(fault.fault, "\(run)-\(fault.fault)", "i=\(index)&\(fault.query)"))
    }
    let results = try await fetcher.results(of: urls).value(within: patience)
    #expect(results.count == 1000, "\(results.count) results")
    #expect(results.filter(\.isSuccess).isEmpty, "\(results.filter(\.isSuccess).count) faults succeeded")
    var answersLost = 0
    for (index, result) in results.enumerated() {
        let fault = fault(index)
        // On Linux, after a run of connection resets, Dispatch now and then never reports a
        // new socket's events to URLSession (swift-corelibs-libdispatch#833): the request
        // leaves only when libcurl's own 200 ms timer looks, and the answer never reaches the
        // completion handler, so the attempt ends in the fetcher's timeout. That outcome is
        // the platform's, not the fetcher's, only where the record shows it: the server
        // answered both attempts in full, and the session delivered fewer than two answers.
        let answerLost =
            kind == .urlSession && fault.fault != "stall"
            && result.error as? FutureError == .timedOut(after: .seconds(3))
            && server.answered("\(run)-\(fault.fault)", index: index) == 2 && transport.delivered(urls[index]) < 2
        if answerLost { answersLost += 1 }
        withKnownIssue("URLSession lost the server's answer to request \(index)", isIntermittent: true) {
            switch fault.fault {
            case "stall":
                #expect(result.error as? FutureError == .timedOut(after: .seconds(3)), "\(index): \(result)")
            case "status":
                #expect(
                    result.statusCode.map { [503, 429, 502, 504].contains($0) } == true, "\(index): \(result)")
            default: #expect(lostConnection(result.error), "\(index) \(fault.fault): \(result)")
            }
        } when: {
            answerLost
        }
    }
    // A few at most: many would be a fault of this code, not the platform's rare loss.
    #expect(answersLost <= 5, "URLSession lost \(answersLost) answers")
    #expect(transport.sent == 2000, "\(transport.sent) requests sent, not 2000")
    #expect(transport.maxOut == limit, "\(transport.maxOut) requests out at once")
    #expect(fetcher.queuedRequests == 0, "\(fetcher.queuedRequests) requests still queued")
    try await server.waitUntil("the transport has nothing out") { transport.out == 0 }

    let good = (0..<100).map { server.url("ok", "\(run)-good-\($0)") }
    let answers = try await fetcher.results(of: good).value(within: patience)
    let wrong = answers.enumerated().filter { $0.element.data.map(text) != "ok \(run)-good-\($0.offset)" }
    #expect(wrong.isEmpty, "good requests answered wrongly: \(wrong.prefix(3))")
    #expect(transport.maxOut == limit, "\(transport.maxOut) requests out at once")

    // Every slot is free: `limit` stalled requests are all at the server at once.
    let stalled = uniqueKey("stalled")
    let holds = (0..<limit).map { fetcher.body(of: server.url("stall", stalled, "i=\($0)")) }
    try await server.waitUntil("every slot holds a request") { server.answering(stalled) == limit }
    for hold in holds { hold.cancel() }
    try await server.waitUntil("every held request's connection was closed") { server.closedByClient(stalled) == limit }
    guard let session = transport.transport as? URLSession else { return }
    let deadline = ContinuousClock.now + patience
    while await runningTasks(of: session) > 0 {
        if ContinuousClock.now > deadline {
            Issue.record("the session still runs tasks")
            return
        }
        try await Task.sleep(for: .milliseconds(2))
    }
}

@Suite(.timeLimit(.minutes(1))) struct URLSessionGetFaultTests {
    func get(_ url: URL, on session: URLSession = makeSession()) async throws -> URLResult {
        let result = Promise<URLResult>()
        session.get(url) { result.succeed($0) }
        return try await result.future.value(within: patience)
    }

    @Test(arguments: ["reset-headers", "reset-body", "short"])
    func aBrokenResponseIsAnError(_ fault: String) async throws {
        let server = try FaultServer.shared()
        let result = try await get(server.url(fault, uniqueKey(fault)))
        #expect(lostConnection(result.error))
        #expect(!result.isSuccess)
    }

    @Test func aStalledServerTimesOutWhenTold() async throws {
        let server = try FaultServer.shared()
        let key = uniqueKey("get-stall")
        let configuration = URLSessionConfiguration.ephemeral
        // Whole seconds: FoundationNetworking drops the fraction (0.3 s times out at once,
        // often before the request leaves, and the server then has no request to see closed).
        configuration.timeoutIntervalForRequest = 2
        let result = Promise<URLResult>()
        URLSession(configuration: configuration).get(server.url("stall", key)) { result.succeed($0) }
        try await server.waitUntil("the request arrived") { server.hits(key) == 1 }
        #expect((try await result.future.value(within: patience).error as? URLError)?.code == .timedOut)
        try await server.waitUntil("the connection was closed") { server.closedByClient(key) == 1 }
    }

    @Test func aDrippedBodyAndClosedKeepAliveConnectionsStillSucceed() async throws {
        let server = try FaultServer.shared()
        let session = makeSession()
        let drip = try await get(server.url("drip", uniqueKey("get-drip"), "bytes=10&interval=5"), on: session)
        #expect(drip.data == Data(repeating: UInt8(ascii: "d"), count: 10))
        let key = uniqueKey("get-close")
        for _ in 0..<5 {
            #expect(try await get(server.url("close", key), on: session).data.map(text) == "ok \(key)")
        }
    }

    @Test func cancellingAStalledGetClosesItsConnection() async throws {
        let server = try FaultServer.shared()
        let key = uniqueKey("get-cancel")
        let result = Promise<URLResult>()
        let task = makeSession().get(server.url("stall", key)) { result.succeed($0) }
        try await server.waitUntil("the request is stalled") { server.answering(key) == 1 }
        task.cancel()
        #expect((try await result.future.value(within: patience).error as? URLError)?.code == .cancelled)
        try await server.waitUntil("the connection was closed") { server.closedByClient(key) == 1 }
    }
}
