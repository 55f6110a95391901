import BatonFutures
import BatonHTTP
import BatonLocks
import BatonTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A fetcher lets go of every request, every caller's future and itself once its requests are
/// cancelled mid-flight.
@Suite struct FetcherLeakTests {
    /// 1,000 requests to the test server, which holds each one until the test releases it:
    /// six reach the server and stall there, the rest wait in the fetcher's queue. Half are
    /// fetched one by one by two callers each (coalesced into one request), half as one
    /// `results(of:timeout:)` batch; then every caller cancels, the queued requests first, the stalled
    /// ones last. Every future and the fetcher are released once the session has reported
    /// the cancelled tasks.
    ///
    /// A thousand rather than the 100,000 of the in-memory kinds: each request here is a real
    /// connection to a local server, and a thousand keep the test to a few seconds.
    @Test(.timeLimit(.minutes(1))) func requestsCancelledMidFlightAreReleased() async throws {
        let key = uniqueKey("leaks")
        let server = TestServer.shared
        let session = makeSession()
        let requests = 1_000
        let limit = 6
        let refs = WeakRefs()
        let outcomes = Protected((total: 0, cancelled: 0))
        var urls: [URL] = []
        for index in 0..<requests { urls.append(try await TestServer.url("/held/\(key)?i=\(index)")) }
        do {
            let fetcher = Fetcher(session: session, maxConcurrentRequests: limit)
            refs.add(fetcher)
            let record: @Sendable (Result<Data, any Error>) -> Void = { outcome in
                outcomes.write { outcomes in
                    outcomes.total += 1
                    if case .failure(let error) = outcome, error is CancellationError { outcomes.cancelled += 1 }
                }
            }
            let batch = fetcher.results(of: Array(urls[..<(requests / 2)]))
            batch.whenComplete { record($0.map { _ in Data() }) }
            refs.add(batch)
            var callers: [Future<Data>] = []
            for url in urls[(requests / 2)...] {
                for _ in 0..<2 {
                    let caller = fetcher.body(of: url)
                    caller.whenComplete(record)
                    refs.add(caller)
                    callers.append(caller)
                }
            }
            try await server.waitUntil("\(limit) requests are held") { server.inFlight(key) == limit }
            #expect(fetcher.queuedRequests == requests - limit)
            for caller in callers.reversed() { caller.cancel() }
            batch.cancel()
            #expect(fetcher.queuedRequests == 0)
        }
        #expect(outcomes.value.total == requests + 1)
        #expect(outcomes.value.cancelled == requests + 1)
        let released = await eventuallyHolds { refs.alive == 0 }
        #expect(released, "\(refs.alive) of \(refs.count) objects alive")
        #expect(server.hits(key) == limit)
        // Let the server answer the requests it still holds, so its handlers end.
        server.release(key, count: limit)
        session.finishTasksAndInvalidate()
    }

    /// Requests answered, and requests refused once the fetcher is shut down, leave nothing
    /// behind: each caller's future, and the fetcher, are released.
    @Test(.timeLimit(.minutes(1))) func answeredAndRefusedRequestsAreReleased() async throws {
        let session = makeSession()
        let refs = WeakRefs()
        let key = uniqueKey("released")
        do {
            let fetcher = Fetcher(session: session, maxConcurrentRequests: 4)
            refs.add(fetcher)
            for index in 0..<20 {
                let answered = fetcher.body(of: try await TestServer.url("/hello/\(key)?i=\(index)"))
                refs.add(answered)
                _ = try await answered.value()
            }
            await fetcher.shutDown(gracePeriod: .seconds(30))
            for index in 0..<20 {
                let refused = fetcher.result(of: try await TestServer.url("/hello/\(key)?r=\(index)"))
                refs.add(refused)
                guard case .error(let error as FetcherShutDownError, _, _) = try await refused.value()
                else {
                    Issue.record("a request after the shutdown must be refused")
                    continue
                }
                #expect(error.reason == FetcherShutDownError.Reason.refused)
            }
        }
        let released = await eventuallyHolds { refs.alive == 0 }
        #expect(released, "\(refs.alive) of \(refs.count) objects alive")
        session.finishTasksAndInvalidate()
    }
}
