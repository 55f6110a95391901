import BatonFutures
import BatonLocks
import Foundation
import Testing

@testable import BatonHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the fetcher's state machine decides, as values: no request is sent.
@Suite(.timeLimit(.minutes(1))) struct FetcherStateMachineTests {
    private let url = URL(string: "http://127.0.0.1/page")!

    private func ticket(_ path: String = "/page") -> FetcherStateMachine.Ticket {
        FetcherStateMachine.Ticket(
            request: URLRequest(url: URL(string: "http://127.0.0.1\(path)")!), method: "GET", isOnlyAttempt: false)
    }

    /// A caller's GET of `url`, answered with the whole result.
    private func call(_ url: URL) -> FetcherStateMachine.Call {
        FetcherStateMachine.Answering(
            request: URLRequest(url: url), url: url, transform: { $0 }, classify: FetcherCounts.Answer.of)
    }

    private func status(_ code: Int, headers: [String: String] = [:]) -> HTTPStatusError {
        let response = HTTPURLResponse(url: url, statusCode: code, httpVersion: "HTTP/1.1", headerFields: headers)!
        return HTTPStatusError(statusCode: code, data: Data(), response: response)
    }

    @Test func aSecondRequestForTheSameURLJoinsTheFirst() {
        var machine = FetcherStateMachine(maxConcurrentRequests: 2)
        let other = URL(string: "http://127.0.0.1/other")!
        let (first, second, third) = (Promise<URLResult>(), Promise<URLResult>(), Promise<URLResult>())
        let (firstCall, secondCall, otherCall) = (call(url), call(url), call(other))
        guard case .startNew(admit: nil) = machine.take(firstCall, fetch: first.future, ticket: nil) else {
            Issue.record("the first request of a URL must start a fetch")
            return
        }
        guard case .joined(let joined) = machine.take(secondCall, fetch: second.future, ticket: nil) else {
            Issue.record("a second request of the URL in flight must join it")
            return
        }
        #expect(joined === first.future)
        guard case .startNew = machine.take(otherCall, fetch: third.future, ticket: nil) else {
            Issue.record("another URL must start its own fetch")
            return
        }
        #expect(machine.unansweredCount == 3)
        // The fetch is cancelled only when its last caller leaves.
        guard case .othersWait = machine.leave(firstCall), case .cancel(let cancelled) = machine.leave(secondCall)
        else {
            Issue.record("the fetch must be cancelled when its last caller leaves, and only then")
            return
        }
        #expect(cancelled === first.future)
        // Each cancelled call ends; the other is still to be answered.
        _ = machine.ended(firstCall, .cancelled)
        _ = machine.ended(secondCall, .cancelled)
        #expect(machine.unansweredCount == 1 && machine.counts.cancelled == 2)
        // Completed: the next request of the URL starts a new fetch.
        machine.completed(other, third.future)
        let again = Promise<URLResult>()
        guard case .startNew = machine.take(call(other), fetch: again.future, ticket: nil) else {
            Issue.record("a completed fetch must not be joined")
            return
        }
        // The caller of the completed fetch leaving cancels nothing: the fetch is over.
        guard case .othersWait = machine.leave(otherCall) else {
            Issue.record("leaving a completed fetch must not cancel the URL's new one")
            return
        }
    }

    @Test func anOnlyAttemptTakesItsSlotWhenItsCallIsTaken() {
        var machine = FetcherStateMachine(maxConcurrentRequests: 1)
        let (first, second) = (ticket("/1"), ticket("/2"))
        let taken = [
            machine.take(call(URL(string: "http://127.0.0.1/1")!), fetch: first.promise.future, ticket: first),
            machine.take(call(URL(string: "http://127.0.0.1/2")!), fetch: second.promise.future, ticket: second),
        ]
        guard case .startNew(admit: .send) = taken[0], case .startNew(admit: .queued) = taken[1] else {
            Issue.record("the first call's attempt must get the slot and the second's must queue, not \(taken)")
            return
        }
        #expect(machine.running == 1 && machine.queuedCount == 1)
    }

    @Test func aCallIsRefusedOnceTheShutdownHasBegun() {
        var machine = FetcherStateMachine(maxConcurrentRequests: 1)
        let drained = machine.shutDown(waiting: .semaphore(AsyncSemaphore(value: 0)))
        #expect(drained)
        let attempt = ticket()
        guard case .refused = machine.take(call(url), fetch: attempt.promise.future, ticket: attempt) else {
            Issue.record("a call after the shutdown began must be refused")
            return
        }
        #expect(machine.running == 0 && machine.unansweredCount == 0 && machine.counts.refused == 1)
    }

    @Test func aSlotFreedByAFailedRequestGoesToTheOldestQueuedOne() {
        var machine = FetcherStateMachine(maxConcurrentRequests: 1)
        let (first, second, third) = (ticket("/1"), ticket("/2"), ticket("/3"))
        let admitted = [machine.admit(first), machine.admit(second), machine.admit(third)]
        #expect(admitted == [.send, .queued, .queued])
        #expect(machine.queuedCount == 2)
        // The first fails: its slot passes straight to the second, not to a new request.
        guard case .send(let next) = machine.finished() else {
            Issue.record("a freed slot must go to the oldest queued request")
            return
        }
        #expect(next === second)
        #expect(machine.running == 1 && machine.queuedCount == 1)
        // A withdrawn request is skipped; with none queued the slot is freed.
        let withdrawn = machine.withdraw(third)
        #expect(withdrawn)
        guard case .slotFreed = machine.finished() else {
            Issue.record("with no request queued the slot must be freed")
            return
        }
        #expect(machine.running == 0)
        let afterwards = machine.admit(ticket())
        #expect(afterwards == .send)
    }

    @Test func aHoldKeepsFreedSlotsUntilItEnds() {
        var machine = FetcherStateMachine(maxConcurrentRequests: 2)
        let tickets = (0..<4).map { ticket("/\($0)") }
        var admitted: [FetcherStateMachine.Admit] = []
        for ticket in tickets { admitted.append(machine.admit(ticket)) }
        #expect(admitted == [.send, .send, .queued, .queued])
        machine.beginHold()
        guard case .slotFreed = machine.finished(), case .slotFreed = machine.finished() else {
            Issue.record("during a hold a freed slot must stay free")
            return
        }
        let withdrawn = machine.withdraw(tickets[2])
        #expect(withdrawn)
        let sends = machine.endHold()
        #expect(sends.count == 1 && sends.first === tickets[3])
        #expect(machine.running == 1 && machine.queuedCount == 0)
    }

    @Test func retriesOnlyTransientFailuresOfIdempotentRequestsWithinTheAttempts() {
        let policy = Fetcher.RetryPolicy(
            attempts: 3, backoff: .exponential(initial: .milliseconds(2)), maximumRetryAfter: .seconds(5))
        let get = FetcherStateMachine.Retries(policy: policy, idempotent: true)
        let now = Date()
        #expect(get.decision(afterAttempt: 1, failedWith: status(503), now: now) == .retry(after: .milliseconds(2)))
        #expect(get.decision(afterAttempt: 2, failedWith: status(503), now: now) == .retry(after: .milliseconds(4)))
        #expect(get.decision(afterAttempt: 3, failedWith: status(503), now: now) == .giveUp)
        #expect(get.decision(afterAttempt: 1, failedWith: status(404), now: now) == .giveUp)
        #expect(get.decision(afterAttempt: 1, failedWith: URLError(.cannotConnectToHost), now: now) != .giveUp)
        #expect(get.decision(afterAttempt: 1, failedWith: CancellationError(), now: now) == .giveUp)
        // Retry-After: the longer of it and the backoff, at most the policy's cap.
        let asked = status(503, headers: ["Retry-After": "2"])
        #expect(get.decision(afterAttempt: 1, failedWith: asked, now: now) == .retry(after: .seconds(2)))
        let tooLong = status(429, headers: ["Retry-After": "60"])
        #expect(get.decision(afterAttempt: 1, failedWith: tooLong, now: now) == .retry(after: .seconds(5)))
        // A POST is tried once.
        let post = FetcherStateMachine.Retries(policy: policy, idempotent: false)
        #expect(post.attempts == 1)
        #expect(post.decision(afterAttempt: 1, failedWith: status(503), now: now) == .giveUp)
    }
}
