import BatonFutures
import BatonHTTP
import BatonLocks
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite(.timeLimit(.minutes(1))) struct URLSessionGetTests {
    /// A session whose delegate queue runs completion handlers concurrently: the pair must not
    /// rely on a serial queue.
    static let concurrentSession: URLSession = {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 4
        return URLSession(configuration: .ephemeral, delegate: nil, delegateQueue: queue)
    }()

    @Test func getDeliversOneResult() async throws {
        let key = uniqueKey("get")
        let url = try await TestServer.url("/hello/\(key)")
        let result = Promise<URLResult>()
        Self.concurrentSession.get(url) { result.succeed($0) }
        let outcome = try await result.future.value(within: patience)
        #expect(outcome.statusCode == 200)
        #expect(outcome.data.map { String(decoding: $0, as: UTF8.self) } == "hello \(key)")
    }

    @Test(arguments: 1...5) func pairRunsInParallelAndArrivesTogether(_ round: Int) async throws {
        // The left request is answered only once the right one has reached the server: if the
        // pair ran one after the other, the left would time out with a 504.
        let other = uniqueKey("right")
        let left = try await TestServer.url("/waitfor/\(uniqueKey("left"))?other=\(other)")
        let right = try await TestServer.url("/hello/\(other)")
        let calls = Protected(0)
        let both = Promise<(URLResult, URLResult)>()
        Self.concurrentSession.get(left, right) { l, r in
            calls.write { $0 += 1 }
            both.succeed((l, r))
        }
        let (l, r) = try await both.future.value(within: patience * 2)
        #expect(l.statusCode == 200)
        #expect(l.data.map { String(decoding: $0, as: UTF8.self) } == "saw \(other)")
        #expect(r.statusCode == 200)
        #expect(r.data.map { String(decoding: $0, as: UTF8.self) } == "hello \(other)")
        #expect(calls.value == 1)
    }

    @Test func oneFailingStillDeliversBothResults() async throws {
        let key = uniqueKey("ok")
        let good = try await TestServer.url("/hello/\(key)")
        let both = Promise<(URLResult, URLResult)>()
        Self.concurrentSession.get(refusedURL, good) { both.succeed(($0, $1)) }
        let (failed, succeeded) = try await both.future.value(within: patience)
        #expect(failed.error != nil)
        #expect(failed.response == nil)
        #expect(succeeded.isSuccess)
        #expect(TestServer.shared.hits(key) == 1)
    }

    @Test func statusErrorsAreResponsesNotErrors() async throws {
        let url = try await TestServer.url("/status/404/\(uniqueKey("missing"))")
        let both = Promise<(URLResult, URLResult)>()
        makeSession().get(url, url) { both.succeed(($0, $1)) }
        let (a, b) = try await both.future.value(within: patience)
        #expect(a.statusCode == 404 && b.statusCode == 404)
        #expect(a.error == nil && !a.isSuccess)
    }
}
