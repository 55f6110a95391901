import BatonFutures
import Foundation
import Testing

@testable import BatonHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

private func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

/// A fetcher and the URLs the checks of a deprecated spelling use.
private struct Fixture {
    let fetcher = Fetcher(session: makeSession(), retryPolicy: .none)
    let key = uniqueKey("deprecated")
    let hello: URL
    let missing: URL
    let held: URL

    init() async throws {
        hello = try await TestServer.url("/hello/\(key)")
        missing = try await TestServer.url("/status/404/\(key)-missing")
        held = try await TestServer.url("/held/\(key)-held")
    }

    var helloAnswer: String { "hello \(key)" }
    var heldAnswer: String { "held \(key)-held" }

    /// Releases the held request once it is at the server.
    func releaseHeld() async throws {
        let server = TestServer.shared
        try await server.waitUntil("the held request arrived") { server.inFlight("\(key)-held") == 1 }
        server.release("\(key)-held")
    }

    /// How many requests for the held URL reached the server.
    var heldRequests: Int { TestServer.shared.hits("\(key)-held") }

    /// Runs `call` in a task on a URL whose request the server stalls, cancels the task, and
    /// checks that the task throws `CancellationError` and the server sees the request cancelled.
    func expectTaskCancellationCancelsTheRequest(
        _ call: @escaping @Sendable (Fetcher, URL) async throws -> Void
    ) async throws {
        let server = try FaultServer.shared()
        let stalled = uniqueKey("deprecated-stall")
        let url = server.url("stall", stalled)
        let task = Task { [fetcher] in try await call(fetcher, url) }
        try await server.waitUntil("the request is stalled") { server.hits(stalled) == 1 }
        task.cancel()
        let taskOutcome = try await outcome(of: task)
        #expect(throws: CancellationError.self) { try taskOutcome.get() }
        try await server.waitUntil("the client closed the connection") { server.closedByClient(stalled) == 1 }
    }
}

/// Each deprecated spelling still forwards to the new one: it answers as its job does, and a
/// `Future` spelling joins the new spelling's request for the same URL (the server sees one).
/// The tests are deprecated themselves, so that calling the old spellings warns nowhere.
@Suite(.timeLimit(.minutes(1))) struct FetcherDeprecatedTests {
    // MARK: Deprecated in 1.1

    @available(*, deprecated)
    @Test func fetchURLForwardsToBodyOf() async throws {
        let f = try await Fixture()
        let new = f.fetcher.body(of: f.held)
        let old = f.fetcher.fetch(f.held)
        try await f.releaseHeld()
        #expect(text(try await old.value(within: patience)) == f.heldAnswer)
        #expect(text(try await new.value(within: patience)) == f.heldAnswer)
        #expect(f.heldRequests == 1)
        await #expect(throws: HTTPStatusError.self) { try await f.fetcher.fetch(f.missing).value(within: patience) }
    }

    @available(*, deprecated)
    @Test func fetchRequestForwardsToBodyOf() async throws {
        let f = try await Fixture()
        let new = f.fetcher.body(of: f.held)
        let old = f.fetcher.fetch(URLRequest(url: f.held))
        try await f.releaseHeld()
        #expect(text(try await old.value(within: patience)) == f.heldAnswer)
        #expect(text(try await new.value(within: patience)) == f.heldAnswer)
        #expect(f.heldRequests == 1)
        await #expect(throws: HTTPStatusError.self) {
            try await f.fetcher.fetch(URLRequest(url: f.missing)).value(within: patience)
        }
    }

    @available(*, deprecated)
    @Test func fetchResultURLForwardsToResultOf() async throws {
        let f = try await Fixture()
        let new = f.fetcher.result(of: f.held)
        let old = f.fetcher.fetchResult(f.held)
        try await f.releaseHeld()
        #expect(try await old.value(within: patience).data.map(text) == f.heldAnswer)
        #expect(try await new.value(within: patience).data.map(text) == f.heldAnswer)
        #expect(f.heldRequests == 1)
        #expect(try await f.fetcher.fetchResult(f.missing).value(within: patience).statusCode == 404)
    }

    @available(*, deprecated)
    @Test func fetchResultRequestForwardsToResultOf() async throws {
        let f = try await Fixture()
        let new = f.fetcher.result(of: f.held)
        let old = f.fetcher.fetchResult(URLRequest(url: f.held))
        try await f.releaseHeld()
        #expect(try await old.value(within: patience).data.map(text) == f.heldAnswer)
        #expect(try await new.value(within: patience).data.map(text) == f.heldAnswer)
        #expect(f.heldRequests == 1)
        #expect(try await f.fetcher.fetchResult(URLRequest(url: f.missing)).value(within: patience).statusCode == 404)
    }

    @available(*, deprecated)
    @Test func fetchResultsForwardsToResultsOf() async throws {
        let f = try await Fixture()
        let new = f.fetcher.result(of: f.held)
        let old = f.fetcher.fetchResults([f.held, f.missing, f.hello])
        try await f.releaseHeld()
        let results = try await old.value(within: patience)
        #expect(results.map(\.statusCode) == [200, 404, 200])
        #expect(results.map { $0.data.map(text) } == [f.heldAnswer, "status 404", f.helloAnswer])
        #expect(try await new.value(within: patience).data.map(text) == f.heldAnswer)
        #expect(f.heldRequests == 1)
        // The deadline is passed on.
        let late = try await f.fetcher.fetchResults([f.held], timeout: .seconds(1)).value(within: patience)
        #expect(late.first?.error as? FutureError == .timedOut(after: .seconds(1)))
        TestServer.shared.release("\(f.key)-held")
    }

    @available(*, deprecated)
    @Test func dataFromURLForwardsToBodyOf() async throws {
        let f = try await Fixture()
        #expect(text(try await f.fetcher.data(from: f.hello)) == f.helloAnswer)
        await #expect(throws: HTTPStatusError.self) { try await f.fetcher.data(from: f.missing) }
        try await f.expectTaskCancellationCancelsTheRequest { fetcher, url in _ = try await fetcher.data(from: url) }
    }

    @available(*, deprecated)
    @Test func dataForRequestForwardsToBodyOf() async throws {
        let f = try await Fixture()
        #expect(text(try await f.fetcher.data(for: URLRequest(url: f.hello))) == f.helloAnswer)
        await #expect(throws: HTTPStatusError.self) { try await f.fetcher.data(for: URLRequest(url: f.missing)) }
        try await f.expectTaskCancellationCancelsTheRequest { fetcher, url in
            _ = try await fetcher.data(for: URLRequest(url: url))
        }
    }

    @available(*, deprecated)
    @Test func resultFromURLForwardsToResultOf() async throws {
        let f = try await Fixture()
        #expect(try await f.fetcher.result(from: f.hello).data.map(text) == f.helloAnswer)
        #expect(try await f.fetcher.result(from: f.missing).statusCode == 404)
        try await f.expectTaskCancellationCancelsTheRequest { fetcher, url in _ = try await fetcher.result(from: url) }
    }

    @available(*, deprecated)
    @Test func resultsFromURLsForwardsToResultsOf() async throws {
        let f = try await Fixture()
        let results = try await f.fetcher.results(from: [f.missing, f.hello])
        #expect(results.map(\.statusCode) == [404, 200])
        let late = try await f.fetcher.results(from: [f.held], timeout: .seconds(1))
        #expect(late.first?.error as? FutureError == .timedOut(after: .seconds(1)))
        TestServer.shared.release("\(f.key)-held")
        try await f.expectTaskCancellationCancelsTheRequest { fetcher, url in
            _ = try await fetcher.results(from: [url])
        }
    }

    // MARK: Deprecated in 1.0

    @available(*, deprecated)
    @Test func resultForURLForwardsToResultOf() async throws {
        let f = try await Fixture()
        let new = f.fetcher.result(of: f.held)
        let old = f.fetcher.result(for: f.held)
        try await f.releaseHeld()
        #expect(try await old.value(within: patience).data.map(text) == f.heldAnswer)
        #expect(try await new.value(within: patience).data.map(text) == f.heldAnswer)
        #expect(f.heldRequests == 1)
        #expect(try await f.fetcher.result(for: f.missing).value(within: patience).statusCode == 404)
    }

    @available(*, deprecated)
    @Test func resultForRequestForwardsToResultOf() async throws {
        let f = try await Fixture()
        let new = f.fetcher.result(of: f.held)
        let old = f.fetcher.result(for: URLRequest(url: f.held))
        try await f.releaseHeld()
        #expect(try await old.value(within: patience).data.map(text) == f.heldAnswer)
        #expect(try await new.value(within: patience).data.map(text) == f.heldAnswer)
        #expect(f.heldRequests == 1)
        #expect(try await f.fetcher.result(for: URLRequest(url: f.missing)).value(within: patience).statusCode == 404)
    }

    @available(*, deprecated)
    @Test func fetchAllForwardsToResultsOf() async throws {
        let f = try await Fixture()
        let new = f.fetcher.result(of: f.held)
        let old = f.fetcher.fetchAll([f.held, f.missing])
        try await f.releaseHeld()
        #expect(try await old.value(within: patience).map(\.statusCode) == [200, 404])
        #expect(try await new.value(within: patience).data.map(text) == f.heldAnswer)
        #expect(f.heldRequests == 1)
        let late = try await f.fetcher.fetchAll([f.held], timeout: .seconds(1)).value(within: patience)
        #expect(late.first?.error as? FutureError == .timedOut(after: .seconds(1)))
        TestServer.shared.release("\(f.key)-held")
    }

    @available(*, deprecated)
    @Test func resultsForURLsForwardsToResultsOf() async throws {
        let f = try await Fixture()
        let results = try await f.fetcher.results(for: [f.missing, f.hello])
        #expect(results.map(\.statusCode) == [404, 200])
        let late = try await f.fetcher.results(for: [f.held], timeout: .seconds(1))
        #expect(late.first?.error as? FutureError == .timedOut(after: .seconds(1)))
        TestServer.shared.release("\(f.key)-held")
        try await f.expectTaskCancellationCancelsTheRequest { fetcher, url in
            _ = try await fetcher.results(for: [url])
        }
    }
}
