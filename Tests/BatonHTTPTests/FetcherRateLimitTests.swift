import BatonFutures
import Clocks
import Foundation
import Testing

@testable import BatonHTTP
@testable import BatonLocks

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The limiters run on a `TestClock`: a request waiting for its permit waits until the test
// advances the clock, never for time to pass. Advances end between two permits' instants.

@Suite(.timeLimit(.minutes(1))) struct FetcherRateLimitTests {
    let server = TestServer.shared

    @Test func theRequestAfterTheBurstReachesTheServerOnlyOnceTheClockAdvances() async throws {
        let clock = TestClock()
        let limiter = RateLimiter(permits: 2, per: .seconds(1), clock: clock)
        let fetcher = Fetcher(session: makeSession(), retryPolicy: .none, rateLimiter: limiter)
        let keys = (0..<3).map { uniqueKey("rate\($0)") }
        var urls: [URL] = []
        for key in keys { urls.append(try await TestServer.url("/hello/\(key)")) }
        let all = fetcher.results(of: urls)
        try await server.waitUntil("the burst reached the server") {
            server.hits(keys[0]) == 1 && server.hits(keys[1]) == 1
        }
        try await server.waitUntil("the third waits for a permit") { limiter.waitingCount == 1 }
        #expect(server.hits(keys[2]) == 0)
        // A permit every 500 ms.
        await clock.advance(by: .milliseconds(600))
        let results = try await all.value(within: patience)
        #expect(results.map(\.statusCode) == [200, 200, 200])
        #expect(server.hits(keys[2]) == 1)
        #expect(limiter.waitingCount == 0)
    }

    @Test func aFetchCancelledWhileWaitingForItsPermitTakesNothingAndFreesItsSlot() async throws {
        let clock = TestClock()
        let limiter = RateLimiter(permits: 1, per: .seconds(1), clock: clock)
        // One slot: the cancelled fetch holds it while it waits, and must give it back.
        let fetcher = Fetcher(
            session: makeSession(), maxConcurrentRequests: 1, retryPolicy: .none, rateLimiter: limiter)
        let keys = ["first", "cancelled", "next"].map { uniqueKey("rate-\($0)") }
        let first = fetcher.body(of: try await TestServer.url("/hello/\(keys[0])"))
        _ = try await first.value(within: patience)
        let cancelled = fetcher.body(of: try await TestServer.url("/hello/\(keys[1])"))
        try await server.waitUntil("the fetch waits for a permit") { limiter.waitingCount == 1 }
        cancelled.cancel()
        try await server.waitUntil("the fetch left the limiter's queue") { limiter.waitingCount == 0 }
        let next = fetcher.body(of: try await TestServer.url("/hello/\(keys[2])"))
        try await server.waitUntil("the next fetch waits for a permit") { limiter.waitingCount == 1 }
        // The permit that accrues at 1 s is the next fetch's: the cancelled one took nothing.
        await clock.advance(by: .milliseconds(1_500))
        #expect(String(decoding: try await next.value(within: patience), as: UTF8.self) == "hello \(keys[2])")
        #expect(cancelled.isCancelled)
        #expect(server.hits(keys[1]) == 0)
        #expect(!limiter.tryAcquire())
        #expect(fetcher.queuedRequests == 0)
    }

    @Test func retriesTakeAPermitEach() async throws {
        let clock = TestClock()
        let limiter = RateLimiter(permits: 1, per: .seconds(1), clock: clock)
        let key = uniqueKey("rate-retry")
        let fetcher = Fetcher(
            session: makeSession(), retryPolicy: .init(attempts: 2, backoff: .none), rateLimiter: limiter)
        let body = fetcher.body(of: try await TestServer.url("/flaky/\(key)?fail=1"))
        try await server.waitUntil("the retry waits for a permit") {
            server.hits(key) == 1 && limiter.waitingCount == 1
        }
        await clock.advance(by: .milliseconds(1_500))
        #expect(String(decoding: try await body.value(within: patience), as: UTF8.self) == "ok")
        #expect(server.hits(key) == 2)
    }
}
