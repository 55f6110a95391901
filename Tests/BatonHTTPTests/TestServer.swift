import BatonFutures
import BatonHTTPTestSupport
import BatonLocks
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The longest a test waits for something that should happen soon: a bug fails the test
/// instead of hanging the suite. Generous, because under the thread sanitizer on a busy
/// 2-core machine the whole suite competes for the cooperative pool.
let patience: Duration = .seconds(30)

/// A real HTTP server on 127.0.0.1, on a port the system picks, started once for the whole
/// test process. Every test uses its own keys in the paths, so tests can run in parallel.
///
/// Routes:
/// - `GET /hello/:key` answers `hello <key>`.
/// - `GET /held/:key` waits until the test releases a permit for `key` (or `patience` passes:
///   then 504), counting the requests in flight and the most seen at once.
/// - `GET|POST /flaky/:key?fail=N&status=S` answers status S (default 503) to the first N
///   requests, then `ok`.
/// - `GET /status/:code/:key` answers that status.
/// - `GET /waitfor/:key?other=K` answers once a request for key K has arrived (or 504 after
///   `patience`): it can only succeed if the two requests are in flight together.
final class TestServer: Sendable {
    static let shared = TestServer()

    private struct State {
        var hits: [String: Int] = [:]
        var inFlight: [String: Int] = [:]
        var maxInFlight: [String: Int] = [:]
        var permits: [String: Int] = [:]
        var waiters: [String: [Promise<Void>]] = [:]
        var arrivals: [String: Promise<Void>] = [:]
    }

    private let state = Protected(State())
    private let server: LoopbackServer

    private init() {
        // The handlers run once the server exists: they reach it as `shared`.
        let testServer: @Sendable () -> TestServer = { TestServer.shared }
        let flaky: LoopbackRoute.Handler = { request, parameters in
            let hit = testServer().arrived(parameters["key"]!)
            let failures = request.query["fail"].flatMap { Int($0) } ?? 0
            let status = request.query["status"].flatMap { Int($0) } ?? 503
            return hit <= failures ? (status, "") : (200, "ok")
        }
        server = try! LoopbackServer(routes: [
            LoopbackRoute("GET", "/hello/:key") { _, parameters in
                let key = parameters["key"]!
                testServer().arrived(key)
                return (200, "hello \(key)")
            },
            LoopbackRoute("GET", "/held/:key") { request, parameters in
                let key = parameters["key"]!
                testServer().arrived(key)
                // Also counted per request index, so a test can tell which of several reached us.
                if let index = request.query["i"] { testServer().arrived("\(key)?i=\(index)") }
                testServer().state.write { state in
                    state.inFlight[key, default: 0] += 1
                    state.maxInFlight[key] = max(state.maxInFlight[key] ?? 0, state.inFlight[key]!)
                }
                defer { testServer().state.write { $0.inFlight[key]! -= 1 } }
                do {
                    try await testServer().permit(key).timeout(after: patience).value
                } catch {
                    return (504, "")
                }
                return (200, "held \(key)")
            },
            LoopbackRoute("GET", "/flaky/:key", flaky),
            LoopbackRoute("POST", "/flaky/:key", flaky),
            LoopbackRoute("GET", "/status/:code/:key") { _, parameters in
                let code = Int(parameters["code"]!) ?? 400
                testServer().arrived(parameters["key"]!)
                return (code, "status \(code)")
            },
            LoopbackRoute("GET", "/waitfor/:key") { request, parameters in
                testServer().arrived(parameters["key"]!)
                let other = request.query["other"] ?? ""
                do {
                    try await testServer().arrival(of: other).shared().timeout(after: patience).value
                } catch {
                    return (504, "")
                }
                return (200, "saw \(other)")
            },
        ])
    }

    /// The server's base URL.
    static func url(_ path: String) async throws -> URL {
        URL(string: "http://127.0.0.1:\(shared.server.port)\(path)")!
    }

    /// Counts a request for `key`; returns its number, from 1.
    @discardableResult
    private func arrived(_ key: String) -> Int {
        let (count, arrival) = state.write { state -> (Int, Promise<Void>) in
            state.hits[key, default: 0] += 1
            let arrival = state.arrivals[key] ?? Promise()
            state.arrivals[key] = arrival
            return (state.hits[key]!, arrival)
        }
        arrival.tryComplete(with: .success(()))
        return count
    }

    private func arrival(of key: String) -> Future<Void> {
        state.write { state in
            let arrival = state.arrivals[key] ?? Promise()
            state.arrivals[key] = arrival
            return arrival.future
        }
    }

    private func permit(_ key: String) -> Future<Void> {
        state.write { state in
            if state.permits[key, default: 0] > 0 {
                state.permits[key]! -= 1
                return .succeeded(())
            }
            let waiter = Promise<Void>()
            state.waiters[key, default: []].append(waiter)
            return waiter.future
        }
    }

    /// Lets `count` held requests for `key` answer (now or when they arrive).
    func release(_ key: String, count: Int = 1) {
        let woken = state.write { state -> [Promise<Void>] in
            var waiters = state.waiters[key] ?? []
            let woken = Array(waiters.prefix(count))
            waiters.removeFirst(woken.count)
            state.waiters[key] = waiters
            state.permits[key, default: 0] += count - woken.count
            return woken
        }
        for waiter in woken { waiter.succeed() }
    }

    func hits(_ key: String) -> Int { state.read { $0.hits[key] ?? 0 } }
    func inFlight(_ key: String) -> Int { state.read { $0.inFlight[key] ?? 0 } }
    func maxInFlight(_ key: String) -> Int { state.read { $0.maxInFlight[key] ?? 0 } }

    /// Waits until `condition` holds, checking every few milliseconds, for at most `patience`.
    func waitUntil(_ what: String, _ condition: @Sendable () -> Bool, sourceLocation: SourceLocation = #_sourceLocation)
        async throws
    {
        let deadline = ContinuousClock.now + patience
        while !condition() {
            if ContinuousClock.now > deadline {
                Issue.record("timed out waiting until \(what)", sourceLocation: sourceLocation)
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(2))
        }
    }
}

/// A unique key per test run, so parallel tests never share server counters.
func uniqueKey(_ prefix: String) -> String {
    "\(prefix)-\(UUID().uuidString.prefix(8))"
}

/// A session of a test's own. On Linux a session allows 6 connections per host, and held
/// requests of tests running in parallel would otherwise queue behind each other in one shared
/// session.
func makeSession() -> URLSession {
    URLSession(configuration: .ephemeral)
}

/// A URL on 127.0.0.1 where nothing listens: connecting is refused.
let refusedURL = URL(string: "http://127.0.0.1:1/nothing")!

extension Future {
    /// The value within `duration`, or the test fails.
    ///
    /// Bounded by a sleeping task, not by the futures' own `timeout` (code under test); the
    /// tests' `.timeLimit` is the bound of last resort.
    func value(within duration: Duration = patience, sourceLocation: SourceLocation = #_sourceLocation)
        async throws -> Value
    {
        try await withThrowingTaskGroup(of: Value?.self) { group in
            group.addTask { try await self.value }
            group.addTask {
                try await Task.sleep(for: duration)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else {
                Issue.record("no result within \(duration)", sourceLocation: sourceLocation)
                throw CancellationError()
            }
            return value
        }
    }
}
