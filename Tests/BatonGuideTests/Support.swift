import Baton
import BatonHTTPTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The longest a guide test waits for something that should happen soon: a bug fails the test
/// by name instead of hanging the suite. Generous, for the thread sanitizer on a busy 2-core
/// machine.
let patience: Duration = .seconds(30)

/// Counts how many callers are inside a section at once, and the most seen.
final class Occupancy: Sendable {
    private struct Counts {
        var inside = 0
        var most = 0
        var entries = 0
    }
    private let counts = Protected(Counts())

    /// Runs `body` counted as inside.
    func measure<R>(_ body: () async throws -> R) async rethrows -> R {
        counts.write { counts in
            counts.inside += 1
            counts.entries += 1
            counts.most = max(counts.most, counts.inside)
        }
        defer { counts.write { $0.inside -= 1 } }
        return try await body()
    }

    /// The most callers seen inside at once.
    var most: Int { counts.read { $0.most } }
    /// How many times a caller entered.
    var entries: Int { counts.read { $0.entries } }
}

/// A real HTTP server on 127.0.0.1, on a port the system picks, started once for the test
/// process. Every test uses keys of its own, so tests may run in parallel.
///
/// Routes:
/// - `GET /text/:value` answers `value`.
/// - `GET /status/:code` answers that status, with the body `status <code>`.
/// - `GET /pair/:key` answers `pair <key>` once two requests for `key` have arrived, or 504
///   after `patience`: both succeed only if they were in flight together.
final class GuideServer: Sendable {
    static let shared = GuideServer()

    private let arrivals = Protected([String: (count: Int, both: Promise<Void>)]())
    private let server: LoopbackServer

    private init() {
        server = try! LoopbackServer(routes: [
            LoopbackRoute("GET", "/text/:value") { _, parameters in (200, parameters["value"]!) },
            LoopbackRoute("GET", "/status/:code") { _, parameters in
                let code = Int(parameters["code"]!) ?? 400
                return (code, "status \(code)")
            },
            LoopbackRoute("GET", "/pair/:key") { _, parameters in
                // The handlers run once the server exists: they reach it as `shared`.
                let key = parameters["key"]!
                do {
                    try await GuideServer.shared.arrival(key).timeout(after: patience).value
                } catch {
                    return (504, "")
                }
                return (200, "pair \(key)")
            },
        ])
    }

    /// A URL of the server.
    static func url(_ path: String) async throws -> URL {
        URL(string: "http://127.0.0.1:\(shared.server.port)\(path)")!
    }

    /// Counts a request for `key`; the future completes once two have arrived.
    private func arrival(_ key: String) -> Future<Void> {
        let (count, both) = arrivals.write { arrivals in
            var entry = arrivals[key] ?? (0, Promise())
            entry.count += 1
            arrivals[key] = entry
            return entry
        }
        if count == 2 { both.succeed() }
        return both.future.shared()
    }
}

/// A key of its own for each test.
func uniqueKey(_ prefix: String) -> String {
    "\(prefix)-\(UUID().uuidString.prefix(8))"
}

/// A session of the test's own (a session allows few connections per host on Linux).
func makeSession() -> URLSession {
    URLSession(configuration: .ephemeral)
}

/// A URL on 127.0.0.1 where nothing listens: connecting is refused.
let refusedURL = URL(string: "http://127.0.0.1:1/nothing")!
