import BatonFutures
import BatonLocks
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Graceful shutdown: the fetcher stops taking requests, answers the ones it took within a grace
// period, cancels the rest, and returns once none is left.
extension Fetcher {
    /// Shuts the fetcher down: it takes no more requests, answers the ones it has taken within
    /// `gracePeriod`, cuts off what is left, and returns when no request is left.
    ///
    /// ```swift
    /// await fetcher.shutDown(gracePeriod: .seconds(10))  // on SIGTERM
    /// ```
    ///
    /// What happens to each request, in order:
    /// 1. **New requests are refused at once**, with nothing sent: ``result(of:)`` and
    ///    ``results(of:timeout:)`` give a ``FetcherShutDownError`` with the reason
    ///    ``FetcherShutDownError/Reason/refused`` as the request's `.error`, and ``body(of:)``
    ///    fails with it. Answers from the cache are refused too.
    /// 2. **Requests taken before run on** as usual: queued ones are sent as slots free, and
    ///    transient failures are retried.
    /// 3. **When `gracePeriod` has passed on `clock`**, every request not yet answered is cut
    ///    off: queued ones are withdrawn without being sent, running ones are cancelled (as is a
    ///    wait before a retry), and each caller gets a ``FetcherShutDownError`` with the reason
    ///    ``FetcherShutDownError/Reason/gracePeriodEnded``. None of the queued requests is sent
    ///    after the grace period.
    /// 4. **It returns when no request is left**: every request taken has been answered exactly
    ///    once, and the transport has reported every request it was sent, so nothing of this
    ///    fetcher is on the wire.
    ///
    /// Cancelling the task that awaits this ends the grace period at once (step 3); the call
    /// still returns only when the transport has reported the cancelled requests, which an
    /// ``HTTPTransport`` does promptly.
    ///
    /// Calling it again, or concurrently, waits in the same way; whichever grace period ends
    /// first cuts off what is left. ``isShutDown`` stays true: a fetcher that has shut down does
    /// not start again.
    ///
    /// - Parameters:
    ///   - gracePeriod: How long requests taken before have to be answered before they are cut
    ///     off.
    ///   - clock: The clock the grace period runs on; a manual clock in tests.
    public func shutDown<C: Clock>(gracePeriod: C.Duration, clock: C) async {
        let deadline = clock.now.advanced(by: gracePeriod)
        let drained = AsyncSemaphore(value: 0)
        if lock.withLock({ machine.shutDown(waiting: .semaphore(drained)) }) { return }
        do {
            try await drained.wait(until: deadline, clock: clock)
            return
        } catch {
            // The grace period is over, or the task was cancelled. If the registration is gone,
            // the fetcher drained meanwhile and took it, under the lock, to wake it.
            guard lock.withLock({ machine.removeDrainWaiter(drained) }) else { return }
        }
        cutOffUnanswered()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            if lock.withLock({ machine.shutDown(waiting: .continuation(continuation)) }) { continuation.resume() }
        }
    }

    /// Shuts the fetcher down with a grace period on `ContinuousClock`: see
    /// ``shutDown(gracePeriod:clock:)``.
    public func shutDown(gracePeriod: Duration) async {
        await shutDown(gracePeriod: gracePeriod, clock: ContinuousClock())
    }

    /// Whether ``shutDown(gracePeriod:clock:)`` has begun: the fetcher takes no more requests.
    public var isShutDown: Bool {
        lock.withLock { machine.isShutDown }
    }

    /// Cancels every request not yet answered, each with an answer that tells its caller it was
    /// cut off by the shutdown; none of the queued ones is sent.
    private func cutOffUnanswered() {
        let calls = lock.withLock {
            machine.beginHold()
            return machine.unansweredCalls
        }
        cancelHoldingSlots(calls) { call in
            let cutOff = FetcherShutDownError(request: call.request, reason: .gracePeriodEnded)
            call.cancel(answering: .error(cutOff, nil, nil))
        }
    }
}
