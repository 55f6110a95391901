import BatonFutures
import BatonLocks
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The bookkeeping of a ``Fetcher``: the concurrency limiter (requests running, requests
/// waiting for a slot, first in first out), the coalescing table (one shared fetch per URL in
/// flight, with the number of callers waiting for it), the callers not yet answered and the
/// shutdown that waits for them, and the retry rules.
///
/// Every mutating method is a transition made under the fetcher's lock; each returns what to do
/// after the lock is released (send a request, cancel a shared fetch) as a value, and does none
/// of it itself.
struct FetcherStateMachine {
    /// One attempt at a request: what to send, and the promise of its result. It identifies the
    /// attempt while it waits for a slot, so that it can be withdrawn when cancelled.
    final class Ticket: Sendable {
        let request: URLRequest
        /// The request's method, in upper case.
        let method: String
        let promise: Promise<URLResult>
        /// Whether this attempt is the request's only one: no retry driver stands between it and
        /// its callers, so its promise takes the request's answer (a transient status is then a
        /// response, a transport error a result), not a failure for a retry to see.
        let isOnlyAttempt: Bool

        init(request: URLRequest, method: String, promise: Promise<URLResult> = Promise(), isOnlyAttempt: Bool) {
            self.request = request
            self.method = method
            self.promise = promise
            self.isOnlyAttempt = isOnlyAttempt
        }
    }

    /// One caller's request, from the moment the fetcher takes it until it is answered: what a
    /// shutdown waits for, and cuts off when its grace period ends.
    ///
    /// The caller's future is an ``Answering`` call's promise, typed for what the caller asked
    /// (a body, a whole result). Its cancellation handler, registered before the call is taken,
    /// leaves the fetch the call waits for; a cut-off cancels it with the shutdown's error as
    /// the answer, so no flag and no second future is needed to tell the caller why.
    class Call: @unchecked Sendable {  // `waitsFor` is written under the fetcher's lock, by `take` only
        let request: URLRequest
        /// The URL of a GET (coalesced), or `nil`.
        let url: URL?
        /// The fetch the call waits for: its own, or the shared fetch of its URL. Set when the
        /// call is taken.
        fileprivate(set) var waitsFor: Future<URLResult>?

        init(request: URLRequest, url: URL?) {
            self.request = request
            self.url = url
        }

        /// Answers the call with `outcome`, the outcome of the fetch it waits for, unless it has
        /// been answered.
        func answer(_ outcome: Result<URLResult, any Error>) {
            preconditionFailure("FetcherStateMachine.Call: answer(_:) is for a subclass to say")
        }

        /// Cancels the call: its caller gets `CancellationError`.
        func cancel() {
            preconditionFailure("FetcherStateMachine.Call: cancel() is for a subclass to say")
        }

        /// Cancels the call with `answer` in place of `CancellationError`.
        func cancel(answering answer: URLResult) {
            preconditionFailure("FetcherStateMachine.Call: cancel(answering:) is for a subclass to say")
        }
    }

    /// A call whose caller waits for a `Value` made from the fetch's outcome by `transform`;
    /// `classify` says how the caller was answered, for the counts.
    final class Answering<Value: Sendable>: Call, @unchecked Sendable {  // as `Call`
        let promise = Promise<Value>()
        private let transform: @Sendable (Result<URLResult, any Error>) -> Result<Value, any Error>
        let classify: @Sendable (Result<Value, any Error>) -> FetcherCounts.Answer

        init(
            request: URLRequest, url: URL?,
            transform: @escaping @Sendable (Result<URLResult, any Error>) -> Result<Value, any Error>,
            classify: @escaping @Sendable (Result<Value, any Error>) -> FetcherCounts.Answer
        ) {
            self.transform = transform
            self.classify = classify
            super.init(request: request, url: url)
        }

        override func answer(_ outcome: Result<URLResult, any Error>) {
            promise.tryComplete(with: transform(outcome))
        }

        override func cancel() {
            promise.future.cancel()
        }

        override func cancel(answering answer: URLResult) {
            promise.cancel(answering: transform(.success(answer)))
        }
    }

    /// A shutdown waiting for the fetcher to drain: no caller unanswered, no request on the wire.
    enum DrainWaiter {
        /// A wait with a deadline, which takes its registration back when the deadline passes.
        case semaphore(AsyncSemaphore)
        /// A wait to the end.
        case continuation(CheckedContinuation<Void, Never>)

        func wake() {
            switch self {
            case .semaphore(let semaphore): _ = semaphore.signal()
            case .continuation(let continuation): continuation.resume()
            }
        }
    }

    let maxConcurrentRequests: Int
    /// Requests sent and not yet reported back by the transport.
    private(set) var running = 0
    /// Requests waiting for a slot, oldest first; `head` is the first not yet taken.
    private var waiting: [Ticket?] = []
    private var head = 0
    /// Queued tickets, with their index in `waiting`.
    private var queuedIndex: [ObjectIdentifier: Int] = [:]
    /// Cancellations of a batch in progress. While there is one, a freed slot stays free
    /// instead of passing to a queued request, so no queued request of the batch can start
    /// before the batch has withdrawn it.
    private var holds = 0
    /// Shared fetches in flight, by URL, with the number of callers still waiting for each.
    private var inFlight: [URL: (fetch: Future<URLResult>, callers: Int)] = [:]
    /// Callers taken and not yet answered.
    private var calls: [ObjectIdentifier: Call] = [:]
    /// Whether a shutdown has begun: no caller is taken any more.
    private(set) var isShutDown = false
    /// Shutdowns waiting for the fetcher to drain.
    private var drainWaiters: [DrainWaiter] = []
    /// What `MetricsReporter` samples.
    var counts = FetcherCounts()

    init(maxConcurrentRequests: Int) {
        self.maxConcurrentRequests = maxConcurrentRequests
    }

    var queuedCount: Int { queuedIndex.count }

    // MARK: Limiter

    enum Admit: Equatable {
        /// A slot is the request's: the caller sends it now.
        case send
        /// It waits for a slot; a later transition hands it one.
        case queued
    }

    /// Takes a slot for a request, or queues it.
    ///
    /// A free slot goes to the request only if none is queued (slots kept free by a hold
    /// belong to the queued requests first).
    mutating func admit(_ ticket: Ticket) -> Admit {
        if running < maxConcurrentRequests && queuedIndex.isEmpty {
            running += 1
            return .send
        }
        queuedIndex[ObjectIdentifier(ticket)] = waiting.count
        waiting.append(ticket)
        return .queued
    }

    enum Finished {
        /// The slot is free.
        case slotFreed
        /// The slot passes straight to this queued request: the caller sends it.
        case send(Ticket)
        /// The slot is free and the fetcher, shutting down, has drained: the caller wakes these.
        case drained([DrainWaiter])
    }

    /// A running request has finished (whatever its outcome; `sent` if the transport reported
    /// it, `nil` if it was cancelled before it was sent): frees its slot, or hands it to the
    /// oldest queued request. During a hold the slot stays free.
    mutating func finished(_ sent: SentRequest? = nil) -> Finished {
        if let sent {
            counts.sent += 1
            counts.sendTime += sent.duration
            counts.bytesReceived += sent.bytes
        }
        if holds == 0, let next = takeOldestWaiting() {
            return .send(next)  // `running` is unchanged
        }
        running -= 1
        let drained = takeDrainWaitersIfDrained()
        return drained.isEmpty ? .slotFreed : .drained(drained)
    }

    /// Starts a hold: until the matching ``endHold()``, freed slots are not handed on.
    mutating func beginHold() {
        holds += 1
    }

    /// Ends a hold. When the last one ends, the queued requests that get one of the slots freed
    /// meanwhile.
    ///
    /// - Returns: The requests the caller must send, oldest first.
    mutating func endHold() -> [Ticket] {
        precondition(holds > 0, "FetcherStateMachine: endHold() without beginHold()")
        holds -= 1
        guard holds == 0 else { return [] }
        var sends: [Ticket] = []
        while running < maxConcurrentRequests, let next = takeOldestWaiting() {
            running += 1
            sends.append(next)
        }
        return sends
    }

    /// Removes and returns the oldest queued request, if any.
    private mutating func takeOldestWaiting() -> Ticket? {
        defer { compactIfDrained() }
        while head < waiting.count {
            let next = waiting[head]
            waiting[head] = nil
            head += 1
            if let next {
                queuedIndex[ObjectIdentifier(next)] = nil
                return next
            }
        }
        return nil
    }

    /// Withdraws a queued request. Returns `false` if it is not queued (it has started).
    mutating func withdraw(_ ticket: Ticket) -> Bool {
        guard let index = queuedIndex.removeValue(forKey: ObjectIdentifier(ticket)) else { return false }
        waiting[index] = nil
        return true
    }

    private mutating func compactIfDrained() {
        if head == waiting.count {
            waiting.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 1024 && head * 2 > waiting.count {
            waiting.removeFirst(head)
            head = 0
            for (index, entry) in waiting.enumerated() {
                if let entry { queuedIndex[ObjectIdentifier(entry)] = index }
            }
        }
    }

    // MARK: Callers, coalescing and shutdown

    enum Take {
        /// A shutdown has begun: the call is not taken.
        case refused
        /// Another caller already fetches this URL: the call waits for that fetch.
        case joined(Future<URLResult>)
        /// The call waits for `fetch`, which the caller must start; if it is the request's only
        /// attempt, `admit` says whether it has a slot (see ``admit(_:)``).
        case startNew(admit: Admit?)
    }

    /// Takes a caller's request, unless a shutdown has begun: a GET joins the fetch of its URL
    /// in flight, and any other call (or the first GET of a URL) waits for `fetch`. When
    /// `fetch` is an only attempt's (`ticket`), it takes a slot or queues in the same step.
    ///
    /// A call taken must be reported ``ended(_:_:)`` once it has its answer.
    mutating func take(_ call: Call, fetch: Future<URLResult>, ticket: Ticket?) -> Take {
        guard !isShutDown else {
            counts.refused += 1
            return .refused
        }
        calls[ObjectIdentifier(call)] = call
        if let url = call.url {
            if let entry = inFlight[url] {
                inFlight[url] = (entry.fetch, entry.callers + 1)
                call.waitsFor = entry.fetch
                return .joined(entry.fetch)
            }
            inFlight[url] = (fetch, 1)
        }
        call.waitsFor = fetch
        return .startNew(admit: ticket.map { admit($0) })
    }

    /// The fetch of `url` has completed: later callers start a new one.
    mutating func completed(_ url: URL, _ fetch: Future<URLResult>) {
        if let entry = inFlight[url], entry.fetch === fetch { inFlight[url] = nil }
    }

    /// A call taken by ``take(_:fetch:ticket:)`` has its answer (or was cancelled, or cut off),
    /// as `answer` says.
    ///
    /// - Returns: The shutdowns the caller must wake, if the fetcher has drained.
    mutating func ended(_ call: Call, _ answer: FetcherCounts.Answer) -> [DrainWaiter] {
        calls[ObjectIdentifier(call)] = nil
        counts.count(answer)
        return takeDrainWaitersIfDrained()
    }

    enum Leave {
        /// Other callers still wait for the fetch, or it has completed: nothing to cancel.
        case othersWait
        /// It was the last caller of this fetch in flight: the caller must cancel it.
        case cancel(Future<URLResult>)
    }

    /// A call taken by ``take(_:fetch:ticket:)`` was cancelled (by its caller, or cut off by a
    /// shutdown): it no longer waits for its fetch. (``ended(_:_:)`` follows, as for any answer.)
    mutating func leave(_ call: Call) -> Leave {
        guard let fetch = call.waitsFor else { return .othersWait }
        guard let url = call.url else { return .cancel(fetch) }
        guard let entry = inFlight[url], entry.fetch === fetch else { return .othersWait }
        if entry.callers > 1 {
            inFlight[url] = (fetch, entry.callers - 1)
            return .othersWait
        }
        inFlight[url] = nil
        return .cancel(fetch)
    }

    /// Every caller not yet answered.
    var unansweredCalls: [Call] { Array(calls.values) }

    /// The number of callers not yet answered.
    var unansweredCount: Int { calls.count }

    /// The number of shutdowns waiting for the fetcher to drain.
    var drainWaiterCount: Int { drainWaiters.count }

    /// Begins the shutdown (if it has not begun) and registers `waiter` to be woken once the
    /// fetcher has drained.
    ///
    /// - Returns: `true` if it has drained already; `waiter` is then not registered.
    mutating func shutDown(waiting waiter: DrainWaiter) -> Bool {
        isShutDown = true
        if isDrained { return true }
        drainWaiters.append(waiter)
        return false
    }

    /// Takes back a waiter registered by ``shutDown(waiting:)`` with `semaphore`.
    ///
    /// - Returns: `false` if it is no longer registered: the fetcher drained and woke it.
    mutating func removeDrainWaiter(_ semaphore: AsyncSemaphore) -> Bool {
        let index = drainWaiters.firstIndex {
            if case .semaphore(let registered) = $0 { return registered === semaphore }
            return false
        }
        guard let index else { return false }
        drainWaiters.remove(at: index)
        return true
    }

    /// No caller unanswered and no request on the wire.
    private var isDrained: Bool { calls.isEmpty && running == 0 }

    private mutating func takeDrainWaitersIfDrained() -> [DrainWaiter] {
        guard !drainWaiters.isEmpty, isDrained else { return [] }
        defer { drainWaiters = [] }
        return drainWaiters
    }
}

extension FetcherStateMachine {
    /// The retry rules for one request: pure, from the fetcher's policy, so they need no lock.
    ///
    /// The fetcher hands ``attempts``, ``isTransient(_:)`` and ``delay(beforeRetry:after:now:)`` to
    /// `Future.retry`, which after each failed attempt decides as
    /// ``decision(afterAttempt:failedWith:now:)`` does.
    struct Retries: Sendable {
        let policy: Fetcher.RetryPolicy
        /// The most attempts: the policy's for an idempotent request, one otherwise.
        let attempts: Int

        init(policy: Fetcher.RetryPolicy, idempotent: Bool) {
            self.policy = policy
            attempts = idempotent ? policy.attempts : 1
        }

        enum Decision: Equatable {
            /// Send the request again after this wait.
            case retry(after: Duration)
            /// Stop: the failure is the request's result.
            case giveUp
        }

        /// What follows attempt `number` (from 1) that failed with `error`, at `now`.
        func decision(afterAttempt number: Int, failedWith error: any Error, now: Date) -> Decision {
            guard number < attempts, Self.isTransient(error) else { return .giveUp }
            return .retry(after: delay(beforeRetry: number, after: error, now: now))
        }

        /// Errors worth another attempt: timeouts, lost or refused connections (a body cut short
        /// included), transient statuses.
        static func isTransient(_ error: any Error) -> Bool {
            if let status = error as? HTTPStatusError { return status.isTransient }
            if (error as? FutureError)?.code == .timedOut { return true }
            if let urlError = error as? URLError {
                let transient: [URLError.Code] = [
                    .timedOut, .networkConnectionLost, .cannotConnectToHost, .notConnectedToInternet, .dnsLookupFailed,
                ]
                return transient.contains(urlError.code)
            }
            return false
        }

        /// The backoff for retry `number`, or what the response's `Retry-After` asks for at `now`
        /// (at most the policy's cap) if that is longer.
        func delay(beforeRetry number: Int, after error: any Error, now: Date) -> Duration {
            let backoff = policy.backoff.delay(beforeRetry: number)
            guard let status = error as? HTTPStatusError, let asked = RetryAfter.delay(in: status.response, now: now)
            else {
                return backoff
            }
            return max(backoff, min(asked, policy.maximumRetryAfter))
        }
    }
}
