import BatonFutures
import Foundation

/// The bookkeeping of a ``Fetcher``: the concurrency limiter (requests running, requests
/// waiting for a slot, first in first out) and the coalescing table (one shared fetch per URL in
/// flight, with the number of callers waiting for it).
///
/// Every method is a transition made under the fetcher's lock; each returns what to do after
/// the lock is released (start a request, cancel a shared fetch) and does none of it itself.
struct FetcherStateMachine {
    /// A request waiting for a slot; `start` sends it.
    struct Waiting {
        let ticket: Ticket
        let start: @Sendable () -> Void
    }

    /// Identifies one queued request, so it can be withdrawn when cancelled.
    final class Ticket: Sendable {}

    /// One fetch in flight that several callers share.
    final class Shared: Sendable {
        let promise = Promise<URLResult>()
        var future: Future<URLResult> { promise.future }
    }

    let maxConcurrentRequests: Int
    /// Requests sent and not yet reported back by the transport.
    private(set) var running = 0
    /// Requests waiting for a slot, oldest first; `head` is the first not yet taken.
    private var waiting: [Waiting?] = []
    private var head = 0
    /// Queued tickets, with their index in `waiting`.
    private var queuedIndex: [ObjectIdentifier: Int] = [:]
    /// Cancellations of a batch in progress. While there is one, a freed slot stays free
    /// instead of passing to a queued request, so no queued request of the batch can start
    /// before the batch has withdrawn it.
    private var holds = 0
    /// Shared fetches in flight, by URL, with the number of callers still waiting for each.
    private var inFlight: [URL: (shared: Shared, callers: Int)] = [:]

    init(maxConcurrentRequests: Int) {
        self.maxConcurrentRequests = maxConcurrentRequests
    }

    var queuedCount: Int { queuedIndex.count }

    // MARK: Limiter

    /// Takes a slot for a request, or queues it. Returns `true` if the caller must start it now.
    ///
    /// A free slot goes to the request only if none is queued (slots kept free by a hold
    /// belong to the queued requests first).
    mutating func admit(_ ticket: Ticket, start: @escaping @Sendable () -> Void) -> Bool {
        if running < maxConcurrentRequests && queuedIndex.isEmpty {
            running += 1
            return true
        }
        queuedIndex[ObjectIdentifier(ticket)] = waiting.count
        waiting.append(Waiting(ticket: ticket, start: start))
        return false
    }

    /// A running request has finished: frees its slot, or hands it to the oldest queued request,
    /// whose `start` the caller must run. During a hold the slot stays free.
    mutating func finished() -> (@Sendable () -> Void)? {
        if holds == 0, let next = takeOldestWaiting() {
            return next.start  // the slot passes straight to it: `running` is unchanged
        }
        running -= 1
        return nil
    }

    /// Starts a hold: until the matching ``endHold()``, freed slots are not handed on.
    mutating func beginHold() {
        holds += 1
    }

    /// Ends a hold. When the last one ends, returns the `start` of each queued request that
    /// gets one of the slots freed meanwhile; the caller must run them.
    mutating func endHold() -> [@Sendable () -> Void] {
        precondition(holds > 0, "FetcherStateMachine: endHold() without beginHold()")
        holds -= 1
        guard holds == 0 else { return [] }
        var starts: [@Sendable () -> Void] = []
        while running < maxConcurrentRequests, let next = takeOldestWaiting() {
            running += 1
            starts.append(next.start)
        }
        return starts
    }

    /// Removes and returns the oldest queued request, if any.
    private mutating func takeOldestWaiting() -> Waiting? {
        defer { compactIfDrained() }
        while head < waiting.count {
            let next = waiting[head]
            waiting[head] = nil
            head += 1
            if let next {
                queuedIndex[ObjectIdentifier(next.ticket)] = nil
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
                if let entry { queuedIndex[ObjectIdentifier(entry.ticket)] = index }
            }
        }
    }

    // MARK: Coalescing

    enum JoinAction {
        /// Another caller already fetches this URL: wait for its result.
        case joined(Shared)
        /// No fetch of this URL is in flight: the caller must start `shared`'s work.
        case startNew(Shared)
    }

    /// Joins the fetch of `url` in flight, or registers `make()` as the new one.
    mutating func join(_ url: URL, make: () -> Shared) -> JoinAction {
        if let entry = inFlight[url] {
            inFlight[url] = (entry.shared, entry.callers + 1)
            return .joined(entry.shared)
        }
        let shared = make()
        inFlight[url] = (shared, 1)
        return .startNew(shared)
    }

    /// A caller no longer waits for `shared`. Returns `true` if it was the last one: the
    /// caller must cancel the shared fetch.
    mutating func leave(_ url: URL, _ shared: Shared) -> Bool {
        guard let entry = inFlight[url], entry.shared === shared else { return false }
        if entry.callers > 1 {
            inFlight[url] = (shared, entry.callers - 1)
            return false
        }
        inFlight[url] = nil
        return true
    }

    /// The shared fetch has completed: later callers start a new one.
    mutating func completed(_ url: URL, _ shared: Shared) {
        if let entry = inFlight[url], entry.shared === shared { inFlight[url] = nil }
    }

    /// Removes every shared fetch, for cancelling them all.
    mutating func removeAllShared() -> [Shared] {
        defer { inFlight = [:] }
        return inFlight.values.map(\.shared)
    }
}
