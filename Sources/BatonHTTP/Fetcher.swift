import BatonFutures
import BatonLocks
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Fetches URLs in parallel with a bound on concurrent requests, one request for identical
/// URLs in flight, an optional cache, retries of transient failures and timeouts.
///
/// ```swift
/// let fetcher = Fetcher(maxConcurrentRequests: 8)
/// let pages = try await fetcher.results(of: urls).value  // [URLResult], in the order of urls
/// let data = try await fetcher.body(of: url).value       // one body; throws on failure
/// ```
///
/// - **Two jobs:** ``body(of:)`` gives the body of a request and fails on anything else (a
///   status outside 2xx, a transport error); ``result(of:)``, and ``results(of:timeout:)`` for
///   many requests, give the whole outcome (the response whatever its status, or the error).
///   Each takes a `URL` or a `URLRequest` (``Fetchable``) and returns a `Future`: in `async`
///   code, await its `value`, which passes the task's cancellation on to the request.
/// - **Bounded concurrency:** at most ``maxConcurrentRequests`` requests are on the wire; the
///   rest wait in first-in, first-out order. A slot is freed when the transport reports the
///   request finished (also after a cancellation), so the bound holds at the server.
/// - **Coalescing:** concurrent GETs of the same URL share one request; each caller gets the
///   result. A caller that cancels leaves the others waiting; the request is cancelled when its
///   last caller cancels.
/// - **Cache:** with a ``FetchCache``, a GET is answered from the cache when it can be, and
///   2xx bodies are stored.
/// - **Retries:** idempotent requests (GET, HEAD, PUT, DELETE, OPTIONS, TRACE, in any case) are
///   retried on transient failures (a timeout, a lost or refused connection, no network, a failed
///   DNS lookup, a body cut short, status 408, 429, 500, 502, 503 or 504) up to
///   ``RetryPolicy/attempts`` times with its `Backoff`, waiting longer when a response's `Retry-After` asks for it (at most
///   ``RetryPolicy/maximumRetryAfter``). A request waiting for its next attempt gives its slot
///   up. See <doc:RetriesAndTimeouts>.
/// - **Truncated bodies:** a response whose body is shorter than its `Content-Length` is a
///   failure (`URLError.networkConnectionLost`), never a success.
/// - **Rate limit:** with a `RateLimiter` from BatonLocks (the `rateLimiter:` parameter of the initializers),
///   every request sent to the server takes a permit first, retries included, since each
///   reaches the server. A request takes its slot, then its permit, just before it is sent, so
///   the rate holds at the server: permits are not spent by requests still queued for a slot.
///   Cached answers and coalesced callers take none. A request cancelled while it waits for its
///   permit leaves the limiter's queue with nothing and frees its slot.
/// - **Timeouts:** ``requestTimeout`` bounds each attempt from the moment it is sent (time in
///   the queue, and waiting for a permit, do not count); ``results(of:timeout:)`` takes an
///   overall deadline.
/// - **Cancellation:** cancelling a returned future, or the task awaiting its `value`, withdraws
///   a queued request or cancels the running one, and stops its retries.
/// - **Shutdown:** ``shutDown(gracePeriod:clock:)`` refuses new requests, answers the ones taken
///   within a grace period, and returns when none is left (with the `Lifecycle` trait,
///   `FetcherService` does it in a swift-service-lifecycle `ServiceGroup`).
///
/// **URLSession on Linux.** FoundationNetworking runs every session's transfers on one shared
/// serial work queue and serialises completion handlers, so the fetcher does almost nothing in
/// them (it completes a promise; your callbacks run on the executor you pick). A session lets at
/// most `httpMaximumConnectionsPerHost` (default 6) connections to one host: a
/// `maxConcurrentRequests` above the given session's limit would be silently capped there, so
/// the fetcher then makes one session of its own from a copy of the session's configuration
/// with the limit raised, and uses it for all its requests. A session with a delegate cannot be
/// copied that way (a delegate belongs to one session); it is used as is, and the lower limit
/// applies. Never create a session per request: reuse the fetcher.
///
/// Thread safety: every method may be called from any thread, concurrently.
public final class Fetcher {
    /// The most requests on the wire at once.
    public let maxConcurrentRequests: Int
    /// How long one attempt may take once sent, or `nil` for no limit but the transport's.
    public let requestTimeout: Duration?
    /// The retry policy for idempotent requests.
    public let retryPolicy: RetryPolicy
    /// The limiter every request sent (retries included) takes a permit from, if any.
    public let rateLimiter: RateLimiter?

    /// Never changes after init, as every stored property but `machine`; they need no lock.
    private let transport: any HTTPTransport
    /// A session this fetcher created (to raise the connection limit), invalidated on deinit.
    private let ownedSession: URLSession?
    private let cache: (any FetchCache)?
    /// Where the waits before retries, and batches' deadlines, run.
    let retryTimer: RetryTimer
    /// What ``setEventHandler(_:)`` set.
    let eventHandler = Protected<(@Sendable (Event) -> Void)?>(nil)
    /// Guards `machine`.
    let lock = Lock(name: "Fetcher")
    /// Guarded by `lock`.
    var machine: FetcherStateMachine

    /// Creates a fetcher that sends its requests through `session`.
    ///
    /// - Parameters:
    ///   - session: The session to use; if its per-host connection limit is below
    ///     `maxConcurrentRequests` and it has no delegate, the fetcher uses a session of its own
    ///     with a copy of its configuration and the limit raised.
    ///   - maxConcurrentRequests: The most requests on the wire at once (at least 1).
    ///   - cache: Where successful GET bodies are kept and looked up, if anywhere.
    ///   - retryPolicy: Retries of transient failures of idempotent requests.
    ///   - requestTimeout: The limit on each attempt once sent.
    ///   - rateLimiter: A limiter that every request sent, retries included, takes a permit from
    ///     just before it is sent; `nil` for no rate limit. It may be shared with other fetchers
    ///     and other work, to keep them all to one rate.
    public convenience init(
        session: URLSession = .shared, maxConcurrentRequests: Int = 6, cache: (any FetchCache)? = nil,
        retryPolicy: RetryPolicy = .standard, requestTimeout: Duration? = .seconds(60), rateLimiter: RateLimiter? = nil
    ) {
        precondition(maxConcurrentRequests >= 1, "Fetcher: maxConcurrentRequests must be at least 1")
        var owned: URLSession?
        if session.configuration.httpMaximumConnectionsPerHost < maxConcurrentRequests, session.delegate == nil {
            // A copy: on Linux `configuration` hands out the session's own object, and raising the
            // limit on it would change the session passed in (`URLSession.shared`, say) for everyone.
            let configuration = session.configuration.copy() as! URLSessionConfiguration
            configuration.httpMaximumConnectionsPerHost = maxConcurrentRequests
            owned = URLSession(configuration: configuration)
        }
        self.init(
            transport: owned ?? session, ownedSession: owned, maxConcurrentRequests: maxConcurrentRequests,
            cache: cache, retryPolicy: retryPolicy, requestTimeout: requestTimeout, rateLimiter: rateLimiter)
    }

    /// Creates a fetcher that sends its requests through `session`, with no rate limit.
    ///
    /// The same as ``init(session:maxConcurrentRequests:cache:retryPolicy:requestTimeout:rateLimiter:)``
    /// without a limiter; kept so that code built against 1.0 keeps linking.
    public convenience init(
        session: URLSession = .shared, maxConcurrentRequests: Int = 6, cache: (any FetchCache)? = nil,
        retryPolicy: RetryPolicy = .standard, requestTimeout: Duration? = .seconds(60)
    ) {
        self.init(
            session: session, maxConcurrentRequests: maxConcurrentRequests, cache: cache, retryPolicy: retryPolicy,
            requestTimeout: requestTimeout, rateLimiter: nil)
    }

    /// Creates a fetcher that sends its requests through another HTTP client.
    ///
    /// The transport's own connection limits are its business: make sure they allow
    /// `maxConcurrentRequests`.
    ///
    /// - Parameters:
    ///   - transport: The HTTP client that sends the requests.
    ///   - maxConcurrentRequests: The most requests on the wire at once (at least 1).
    ///   - cache: Where successful GET bodies are kept and looked up, if anywhere.
    ///   - retryPolicy: Retries of transient failures of idempotent requests.
    ///   - requestTimeout: The limit on each attempt once sent.
    ///   - rateLimiter: A limiter that every request sent, retries included, takes a permit from
    ///     just before it is sent; `nil` for no rate limit.
    public convenience init(
        transport: any HTTPTransport, maxConcurrentRequests: Int = 6, cache: (any FetchCache)? = nil,
        retryPolicy: RetryPolicy = .standard, requestTimeout: Duration? = .seconds(60), rateLimiter: RateLimiter? = nil
    ) {
        self.init(
            transport: transport, ownedSession: nil, maxConcurrentRequests: maxConcurrentRequests, cache: cache,
            retryPolicy: retryPolicy, requestTimeout: requestTimeout, rateLimiter: rateLimiter)
    }

    /// Creates a fetcher that sends its requests through another HTTP client, with no rate limit.
    ///
    /// The same as
    /// ``init(transport:maxConcurrentRequests:cache:retryPolicy:requestTimeout:rateLimiter:)``
    /// without a limiter; kept so that code built against 1.0 keeps linking.
    public convenience init(
        transport: any HTTPTransport, maxConcurrentRequests: Int = 6, cache: (any FetchCache)? = nil,
        retryPolicy: RetryPolicy = .standard, requestTimeout: Duration? = .seconds(60)
    ) {
        self.init(
            transport: transport, maxConcurrentRequests: maxConcurrentRequests, cache: cache, retryPolicy: retryPolicy,
            requestTimeout: requestTimeout, rateLimiter: nil)
    }

    /// A fetcher whose waits before retries, and whose batches' deadlines, run on `retryTimer`.
    convenience init(
        transport: any HTTPTransport, maxConcurrentRequests: Int, retryPolicy: RetryPolicy,
        requestTimeout: Duration?, retryTimer: RetryTimer, rateLimiter: RateLimiter? = nil
    ) {
        self.init(
            transport: transport, ownedSession: nil, maxConcurrentRequests: maxConcurrentRequests, cache: nil,
            retryPolicy: retryPolicy, requestTimeout: requestTimeout, rateLimiter: rateLimiter, retryTimer: retryTimer)
    }

    private init(
        transport: any HTTPTransport, ownedSession: URLSession?, maxConcurrentRequests: Int,
        cache: (any FetchCache)?, retryPolicy: RetryPolicy, requestTimeout: Duration?, rateLimiter: RateLimiter?,
        retryTimer: RetryTimer = .dispatch
    ) {
        precondition(maxConcurrentRequests >= 1, "Fetcher: maxConcurrentRequests must be at least 1")
        self.transport = transport
        self.ownedSession = ownedSession
        self.maxConcurrentRequests = maxConcurrentRequests
        self.cache = cache
        self.retryPolicy = retryPolicy
        self.requestTimeout = requestTimeout
        self.rateLimiter = rateLimiter
        self.retryTimer = retryTimer
        machine = FetcherStateMachine(maxConcurrentRequests: maxConcurrentRequests)
    }

    deinit {
        ownedSession?.finishTasksAndInvalidate()
    }

    /// The effective limit on connections per host of the session in use, when it is a
    /// `URLSession`.
    public var connectionsPerHost: Int? {
        (transport as? URLSession)?.configuration.httpMaximumConnectionsPerHost
    }

    // MARK: Public API
    //
    // A fetcher does two jobs, and each has one method that takes a URL or a URLRequest through
    // one parameter type, `Fetchable` (a URL is a GET):
    //
    // - `body(of:)`: the body of a request. Anything else is a failure: a status outside 2xx
    //   (`HTTPStatusError`, which keeps the response), a transport error, a cancellation.
    // - `result(of:)`: the whole outcome of a request, a `URLResult`: the response whatever its
    //   status, or the error. Its future fails only when it is cancelled. `results(of:timeout:)`
    //   is the same job for a batch: one result per request, in their order, through the same
    //   `maxConcurrentRequests` bound, with an overall deadline after which the requests left are
    //   cancelled and reported as `FutureError.timedOut(after:)`.
    //
    // Each returns a `Future` and none has an `async` twin. `try await fetcher.body(of: url).value`
    // is the async call: `Future.value` cancels the future when the awaiting task is cancelled,
    // and cancelling a fetcher's future withdraws its queued request or cancels the running one
    // (other callers of a coalesced GET keep theirs). A twin would add that one line to every
    // method and double the surface again; a `Future` also lets code that is not async combine
    // (`zip`, `Future.all`), time out or observe a fetch.
    //
    // The names say what the future holds, `of:` what is fetched. They are new names rather than
    // `fetch(_:)` made generic: the concrete `fetch(_: URL)` kept beside a generic `fetch(_:)`
    // would win overload resolution, so every call would still reach the deprecated method.
    //
    // 1.0 spelled the two jobs with nine methods (`fetch(_:)`, `fetchResult(_:)` for a URL and
    // for a request, `fetchResults(_:timeout:)`, and the twins `data(from:)`, `data(for:)`,
    // `result(from:)`, `results(from:timeout:)`). They stay, deprecated, in
    // Fetcher+Deprecated.swift, and forward here.

    /// Fetches the body of `request`: a URL (a GET) or a `URLRequest`.
    ///
    /// ```swift
    /// let data = try await fetcher.body(of: url).value  // cancelling the task cancels the request
    /// ```
    ///
    /// Only GETs are coalesced and cached; only idempotent methods are retried. Cancelling the
    /// future, or the task that awaits its `value`, withdraws this caller's request if it is
    /// queued or cancels it if it is running (other callers of the same GET keep theirs).
    ///
    /// - Parameter request: A `URL` or a `URLRequest` (see ``Fetchable``).
    /// - Returns: A future of the body of a 2xx response. It fails with ``HTTPStatusError`` for
    ///   any other status (the error keeps the body and response), with the transport's error
    ///   (or `FutureError.timedOut(after:)` after ``requestTimeout``) when no response arrived,
    ///   with ``FetcherShutDownError`` when the fetcher was shut down before the request was
    ///   taken or answered, or with `CancellationError`.
    public func body(of request: some Fetchable) -> Future<Data> {
        fetch(request.fetchRequest, answering: Self.body, classify: FetcherCounts.Answer.of(body:))
    }

    /// The body of a 2xx response; anything else as a failure.
    private static func body(_ answer: Result<URLResult, any Error>) -> Result<Data, any Error> {
        switch answer {
        case .success(.response(let data, let response)):
            let status = (response as? HTTPURLResponse)?.statusCode ?? 200
            guard (200..<300).contains(status) else {
                return .failure(HTTPStatusError(statusCode: status, data: data, response: response))
            }
            return .success(data)
        case .success(.error(let error, _, _)):
            return .failure(error)
        case .failure(let error):
            return .failure(error)
        }
    }

    /// Fetches `request` and reports how it ended: the response, whatever its status, or the
    /// error.
    ///
    /// ```swift
    /// switch try await fetcher.result(of: url).value {
    /// case .response(let data, let response): …  // a 404 too
    /// case .error(let error, _, _): …            // no response arrived
    /// }
    /// ```
    ///
    /// Only GETs are coalesced and cached; only idempotent methods are retried, and when the
    /// retries run out the last response or error is the result. Cancellation works as for
    /// ``body(of:)``. Once the fetcher is shut down (``shutDown(gracePeriod:clock:)``), the
    /// result is a ``FetcherShutDownError`` at once, and nothing is sent.
    ///
    /// - Parameter request: A `URL` or a `URLRequest` (see ``Fetchable``).
    /// - Returns: A future that succeeds with the response or the error; it fails only with
    ///   `CancellationError`, when it (or the task awaiting its `value`) is cancelled.
    public func result(of request: some Fetchable) -> Future<URLResult> {
        fetch(request.fetchRequest, answering: { $0 }, classify: FetcherCounts.Answer.of)
    }

    /// The one path of ``body(of:)`` and ``result(of:)``: the caller's future is made from the
    /// outcome of the fetch by `transform`, in one step.
    ///
    /// A request that gets one attempt (no retries: a policy of one attempt, or a method that is
    /// not idempotent) is two futures: its attempt's, which a coalesced GET's callers share,
    /// and the caller's. Retries add their driver between them.
    ///
    /// It takes the `URLRequest`, not the caller's `Fetchable`: generic over the answer's type
    /// alone, it is specialised for `Data` and `URLResult` at its two call sites, and so is every
    /// future operation in it. Generic over the `Fetchable` too, it ran unspecialised (the
    /// public methods are generic and not inlinable), and each of its generic types cost a
    /// runtime metadata lookup.
    private func fetch<Value: Sendable>(
        _ request: URLRequest,
        answering transform: @escaping @Sendable (Result<URLResult, any Error>) -> Result<Value, any Error>,
        classify: @escaping @Sendable (Result<Value, any Error>) -> FetcherCounts.Answer
    ) -> Future<Value> {
        let method = (request.httpMethod ?? "GET").uppercased()
        let url = method == "GET" ? request.url : nil
        if let url, let cache, let data = cache.value(forKey: url), !isShutDown {
            let cached = URLResult.response(data, Self.cachedResponse(url: url, length: data.count))
            return Self.answered(transform(.success(cached)))
        }
        let call = FetcherStateMachine.Answering(request: request, url: url, transform: transform, classify: classify)
        // Before the call is taken, so that a shutdown that cuts it off at once still stops its fetch.
        call.promise.onCancel { self.leave(call) }
        let retries = FetcherStateMachine.Retries(
            policy: retryPolicy, idempotent: url != nil || Self.idempotentMethods.contains(method))
        // The fetch this call starts, unless it joins a GET of its URL in flight.
        let ticket =
            retries.attempts == 1
            ? FetcherStateMachine.Ticket(request: request, method: method, isOnlyAttempt: true) : nil
        // With retries, the driver's outcome completes it once the call has started the fetch.
        let promise = ticket?.promise ?? Promise<URLResult>()
        let fetch = promise.future
        let taken = lock.withLock { machine.take(call, fetch: fetch, ticket: ticket) }
        if case .refused = taken {
            // Answered at once, which also lets go of its cancellation handler.
            call.answer(.success(.error(FetcherShutDownError(request: request, reason: .refused), nil, nil)))
            return call.promise.future
        }
        // Counted before the caller, whose callbacks come after this one, sees its answer.
        call.promise.future.whenComplete { answer in
            let drained = self.lock.withLock { self.machine.ended(call, classify(answer)) }
            for waiter in drained { waiter.wake() }
        }
        switch taken {
        case .refused:
            break
        case .joined(let shared):
            shared.whenComplete { call.answer($0) }
        case .startNew(let admit):
            fetch.whenComplete { outcome in
                // The request's only attempt has answered: a transient failure was its last.
                if let ticket, case .success(let answer) = outcome, let cause = Self.transientCause(of: answer) {
                    self.report(.gaveUp(ticket.request, attempts: 1, cause: cause))
                }
                if let url {
                    self.lock.withLock { self.machine.completed(url, fetch) }
                    if let cache = self.cache, case .success(let result) = outcome, result.isSuccess,
                        let data = result.data
                    {
                        cache.setValue(data, forKey: url, cost: data.count)
                    }
                }
                call.answer(outcome)
            }
            if let ticket {
                watch(ticket)
                if admit == .send { send(ticket) }
            } else {
                promise.complete(with: perform(request, method: method, attempts: retries.attempts))
            }
        }
        return call.promise.future
    }

    /// A future completed with `outcome`.
    private static func answered<Value>(_ outcome: Result<Value, any Error>) -> Future<Value> {
        switch outcome {
        case .success(let value): .succeeded(value)
        case .failure(let error): .failed(error)
        }
    }

    /// `call` was cancelled, by its caller or by a shutdown's cut-off: it leaves its fetch, which
    /// is cancelled if no other caller waits for it.
    private func leave(_ call: FetcherStateMachine.Call) {
        if case .cancel(let fetch) = lock.withLock({ machine.leave(call) }) { fetch.cancel() }
    }

    /// The number of requests waiting for a slot.
    public var queuedRequests: Int {
        lock.withLock { machine.queuedCount }
    }

    /// What the fetcher has counted, and the requests holding a slot and waiting for one: what
    /// `MetricsReporter` samples.
    var counts: (FetcherCounts, inFlight: Int, queued: Int) {
        lock.withLock { (machine.counts, machine.running, machine.queuedCount) }
    }

    // MARK: Attempts

    /// One attempt of a request with retries: waits for a slot, sends the request, and fails on
    /// a transient status so that `retry` sees it.
    func attempt(_ request: URLRequest, method: String) -> Future<URLResult> {
        let ticket = FetcherStateMachine.Ticket(request: request, method: method, isOnlyAttempt: false)
        let admit = lock.withLock { machine.admit(ticket) }
        watch(ticket)
        switch admit {
        case .send: send(ticket)
        case .queued: break
        }
        return ticket.promise.future
    }

    /// Withdraws the ticket when it is cancelled while it waits for a slot. (Once it runs, `send`
    /// has a handler of its own that cancels the transport's task.)
    private func watch(_ ticket: FetcherStateMachine.Ticket) {
        ticket.promise.onCancel {
            _ = self.lock.withLock { self.machine.withdraw(ticket) }
        }
    }

    /// Sends the ticket's request in a slot this call owns, once it has a permit of the rate
    /// limiter (if any), and frees the slot when the transport reports.
    func send(_ ticket: FetcherStateMachine.Ticket) {
        if ticket.promise.isCancelled {
            slotFreed()
            return
        }
        guard let rateLimiter else { return transmit(ticket) }
        if rateLimiter.tryAcquire() { return transmit(ticket) }
        // Waits for its permit in the limiter's queue, behind the requests that came before;
        // cancelled meanwhile, it leaves with nothing and frees the slot.
        let wait = Task {
            do {
                try await rateLimiter.acquire()
            } catch {
                self.slotFreed()
                return
            }
            self.transmit(ticket)
        }
        ticket.promise.onCancel { wait.cancel() }
    }

    /// Sends the ticket's request in a slot this call owns, and frees the slot when the
    /// transport reports.
    private func transmit(_ ticket: FetcherStateMachine.Ticket) {
        let promise = ticket.promise
        if promise.isCancelled {
            slotFreed()
            return
        }
        let sentAt = ContinuousClock.now
        let task = transport.send(ticket.request) { result in
            let sent = SentRequest(duration: .now - sentAt, bytes: result.data?.count ?? 0)
            self.settle(ticket, with: result.checkingLength(method: ticket.method))
            self.slotFreed(sent)
        }
        promise.onCancel { task.cancel() }
        if let requestTimeout {
            let timer = DeadlineTimer.schedule(after: requestTimeout) {
                if self.settle(ticket, with: .error(FutureError.timedOut(after: requestTimeout), nil, nil)) {
                    task.cancel()
                }
            }
            promise.future.whenComplete { _ in timer.cancel() }
        }
    }

    /// Completes the ticket's promise with what the transport reported (or the attempt's
    /// timeout), unless it has completed; returns whether this completed it.
    ///
    /// An attempt with retries fails on a transport error or a transient status, so that the
    /// retry driver sees it. The only attempt of a request takes the request's answer: the
    /// response whatever its status, or the error.
    @discardableResult
    private func settle(_ ticket: FetcherStateMachine.Ticket, with result: URLResult) -> Bool {
        let outcome: Result<URLResult, any Error>
        switch result {
        case .response(let data, let response):
            let status = (response as? HTTPURLResponse)?.statusCode ?? 200
            outcome =
                !ticket.isOnlyAttempt && HTTPStatusError.isTransient(statusCode: status)
                ? .failure(HTTPStatusError(statusCode: status, data: data, response: response)) : .success(result)
        case .error(let error, _, _):
            let answers = ticket.isOnlyAttempt && !(error is CancellationError)
            outcome = answers ? .success(.error(error, nil, nil)) : .failure(error)
        }
        return ticket.promise.tryComplete(with: outcome)
    }

    /// What made `answer` worth another attempt, if anything: a transient status or error.
    private static func transientCause(of answer: URLResult) -> (any Error)? {
        switch answer {
        case .response(let data, let response):
            let status = (response as? HTTPURLResponse)?.statusCode ?? 200
            return HTTPStatusError.isTransient(statusCode: status)
                ? HTTPStatusError(statusCode: status, data: data, response: response) : nil
        case .error(let error, _, _):
            return FetcherStateMachine.Retries.isTransient(error) ? error : nil
        }
    }

    private func slotFreed(_ sent: SentRequest? = nil) {
        switch lock.withLock({ machine.finished(sent) }) {
        case .slotFreed: break
        case .send(let next): send(next)
        case .drained(let waiters): for waiter in waiters { waiter.wake() }
        }
    }

    /// The response reported for a body found in the cache.
    static func cachedResponse(url: URL, length: Int) -> URLResponse {
        HTTPURLResponse(
            url: url, statusCode: 200, httpVersion: "HTTP/1.1",
            headerFields: ["Content-Length": "\(length)", "X-Baton-Cache": "hit"])!
    }
}

// `machine` is guarded by `lock`; every other stored property is immutable and Sendable.
extension Fetcher: @unchecked Sendable {}
