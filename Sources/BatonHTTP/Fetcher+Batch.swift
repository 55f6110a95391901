import BatonFutures
import BatonLocks
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Many requests at once: a batch with one deadline, and cancelling all of them.
extension Fetcher {
    /// Fetches every request with at most ``maxConcurrentRequests`` in flight, and reports how
    /// each ended, in the order of `requests`.
    ///
    /// ```swift
    /// let pages = try await fetcher.results(of: urls, timeout: .seconds(30)).value  // [URLResult]
    /// ```
    ///
    /// Each result is what ``result(of:)`` gives: a response (any status) or an error; one
    /// failing does not fail the others. After `timeout`, requests still queued or running are
    /// cancelled and their results are `FutureError.timedOut(after:)` errors. Cancelling the
    /// returned future, or the task awaiting its `value`, cancels every request; none that is
    /// still queued is sent.
    ///
    /// - Parameters:
    ///   - requests: URLs or `URLRequest`s (see ``Fetchable``).
    ///   - timeout: The deadline for the whole batch, or `nil` for none.
    /// - Returns: A future of one result per request, in order; it fails only with
    ///   `CancellationError`.
    public func results(of requests: [some Fetchable], timeout: Duration? = nil) -> Future<[URLResult]> {
        let timedOut = Protected(false)
        let fetches = requests.map { result(of: $0) }
        let results = fetches.map { fetch in
            fetch.recover { error in
                let reason: any Error =
                    if error is CancellationError, timedOut.value, let timeout {
                        FutureError.timedOut(after: timeout)
                    } else { error }
                return .error(reason, nil, nil)
            }
        }
        let all = Promise<[URLResult]>()
        Future.all(results).whenComplete { all.tryComplete(with: $0) }
        // The requests themselves are cancelled, as one batch (`results` would turn the
        // cancellation into a value).
        all.onCancel { self.cancelBatch(fetches) }
        if let timeout {
            let deadline = DeadlineTimer.unstarted {
                timedOut.write { $0 = true }
                self.cancelBatch(fetches)
            }
            all.future.whenComplete { _ in deadline.cancel() }
            deadline.start(after: timeout, on: retryTimer)
        }
        return all.future
    }

    /// Cancels every fetch in flight or queued, whatever its method. None of the queued requests
    /// is sent.
    public func cancelAll() {
        let calls = lock.withLock {
            machine.beginHold()
            return machine.unansweredCalls
        }
        cancelHoldingSlots(calls) { $0.cancel() }
    }

    /// Cancels `requests` so that none of them that is queued starts meanwhile.
    private func cancelBatch(_ requests: [Future<URLResult>]) {
        lock.withLock { machine.beginHold() }
        cancelHoldingSlots(requests) { $0.cancel() }
    }

    /// Cancels each of `requests` with `cancel`, under a hold the caller began, then ends it.
    ///
    /// Cancelling a running request frees its slot (at once or whenever the transport reports);
    /// without the hold that slot could start a queued request of the same batch that is not
    /// cancelled yet. Cancellation withdraws a queued request before `cancel()` returns, so once
    /// every request is cancelled none of the batch is queued, and the slots freed meanwhile go
    /// to the requests of other callers.
    func cancelHoldingSlots<Request>(_ requests: [Request], _ cancel: (Request) -> Void) {
        for request in requests { cancel(request) }
        let sends = lock.withLock { machine.endHold() }
        for ticket in sends { send(ticket) }
    }
}
