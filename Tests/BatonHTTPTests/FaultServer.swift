import BatonHTTPTestSupport
import BatonLocks
import Foundation
import Testing

/// An HTTP/1.1 server on 127.0.0.1 over plain sockets (`LoopbackListener`) that misbehaves on
/// purpose, one thread per connection, started once for the test process. Connections are kept alive between requests
/// unless a fault closes them.
///
/// Paths are `/<fault>/<key>?…`; the fault applies to the first `fail` requests for the key (all
/// of them without `fail`), and later ones get `200 ok <key>`:
/// - `ok` — answers `200` with `ok <key>`.
/// - `reset-headers` — resets the connection (RST) after reading the request, before any header.
/// - `reset-body` — sends headers with `Content-Length: 1000` and 100 bytes, then resets.
/// - `short` — sends headers with `Content-Length: 1000` and 100 bytes, then closes (FIN).
/// - `stall` — reads the request and never answers; waits for the client to close.
/// - `status` — answers `code` (default 503) with the body `status <code>` and, given
///   `retry-after`, a `Retry-After` header with that value, percent-decoded.
/// - `drip` — sends headers with `Content-Length: <bytes>` (default 10), then one byte every
///   `interval` milliseconds (default 5); with `forever`, the length is a million bytes and it
///   drips until the client closes.
/// - `close` — answers `200` with `ok <key>` without `Connection: close`, then closes the
///   connection: the client's next request on it finds it dead.
/// - `echo` — answers `200` with `<method> <x-echo header> <body>`, and the header `X-Twice` sent
///   twice, with the values `1` and `2`.
///
/// For each key it records the requests (with their arrival on a monotonic clock), how many are
/// being answered at once (and the most seen), how many connections the client closed while
/// the server was waiting on them, and, for requests with an `i` in the query, how many of them
/// it has answered in full.
final class FaultServer: Sendable {
    /// The server, started on first use; a test that cannot start it fails with the reason.
    static func shared() throws -> FaultServer { try started.get() }

    private static let started = Result { try FaultServer() }

    private struct State {
        var hits: [String: Int] = [:]
        var arrivals: [String: [UInt64]] = [:]
        var methods: [String: [String]] = [:]
        var answering: [String: Int] = [:]
        var maxAnswering: [String: Int] = [:]
        var closedByClient: [String: Int] = [:]
        var answered: [String: Int] = [:]
        var openConnections = 0
    }

    private let state = Protected(State())
    private let listener: LoopbackListener
    var port: Int { listener.port }

    private init() throws {
        let state = state
        // Connections arrive once the server exists: they reach it as `shared()`.
        listener = try LoopbackListener { connection in
            state.write { $0.openConnections += 1 }
            try! FaultServer.shared().serve(connection)
            state.write { $0.openConnections -= 1 }
        }
    }

    func url(_ fault: String, _ key: String, _ query: String = "") -> URL {
        URL(string: "http://127.0.0.1:\(port)/\(fault)/\(key)\(query.isEmpty ? "" : "?" + query)")!
    }

    // MARK: Observations

    func hits(_ key: String) -> Int { state.read { $0.hits[key] ?? 0 } }
    func methods(_ key: String) -> [String] { state.read { $0.methods[key] ?? [] } }
    func answering(_ key: String) -> Int { state.read { $0.answering[key] ?? 0 } }
    func maxAnswering(_ key: String) -> Int { state.read { $0.maxAnswering[key] ?? 0 } }
    func closedByClient(_ key: String) -> Int { state.read { $0.closedByClient[key] ?? 0 } }
    /// How many requests for `key` with `i=<index>` in the query the server has answered: sent
    /// every byte the fault sends, then closed or reset the connection if the fault does.
    func answered(_ key: String, index: Int) -> Int { state.read { $0.answered["\(key)?i=\(index)"] ?? 0 } }
    /// Connections accepted and not yet closed, over all keys.
    var openConnections: Int { state.read { $0.openConnections } }

    /// The time between consecutive arrivals for `key`, on the server's monotonic clock.
    func gaps(_ key: String) -> [Duration] {
        let arrivals = state.read { $0.arrivals[key] ?? [] }
        return zip(arrivals, arrivals.dropFirst()).map { .nanoseconds(Int64($1 - $0)) }
    }

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

    // MARK: Serving

    private func serve(_ connection: ServerConnection) {
        var answeredLast: String?
        defer {
            connection.close()  // before counting it answered: the client has seen the whole answer
            if let answeredLast { state.write { $0.answered[answeredLast, default: 0] += 1 } }
        }
        while let request = connection.readRequest().map(FaultServerRequest.init) {
            let hit = state.write { state in
                state.hits[request.key, default: 0] += 1
                state.arrivals[request.key, default: []].append(DispatchTime.now().uptimeNanoseconds)
                state.methods[request.key, default: []].append(request.method)
                state.answering[request.key, default: 0] += 1
                state.maxAnswering[request.key] = max(
                    state.maxAnswering[request.key] ?? 0, state.answering[request.key]!)
                return state.hits[request.key]!
            }
            let keepOpen = answer(request, hit: hit, on: connection)
            state.write { $0.answering[request.key]! -= 1 }
            let indexed = request.query["i"].map { "\(request.key)?i=\($0)" }
            if !keepOpen {
                answeredLast = indexed
                return
            }
            if let indexed { state.write { $0.answered[indexed, default: 0] += 1 } }
        }
    }

    /// Answers one request; returns whether the connection stays open for the next one.
    private func answer(_ request: FaultServerRequest, hit: Int, on connection: ServerConnection) -> Bool {
        let failing = request.query["fail"].flatMap(Int.init).map { hit <= $0 } ?? true
        let ok = "ok \(request.key)"
        guard failing else { return connection.send(status: 200, body: ok) }
        switch request.fault {
        case "reset-headers":
            connection.reset()
            return false
        case "reset-body", "short":
            connection.sendHead(status: 200, contentLength: 1000)
            connection.write(String(repeating: "x", count: 100))
            if request.fault == "reset-body" { connection.reset() }
            return false
        case "stall":
            if connection.waitForClose() { count(closedBy: request.key) }
            return false
        case "status":
            let code = request.query["code"].flatMap(Int.init) ?? 503
            var headers: [String] = []
            if let retryAfter = request.query["retry-after"] { headers.append("Retry-After: \(retryAfter)") }
            return connection.send(status: code, body: "status \(code)", headers: headers)
        case "drip":
            let forever = request.query["forever"] != nil
            let bytes = forever ? 1_000_000 : request.query["bytes"].flatMap(Int.init) ?? 10
            let interval = request.query["interval"].flatMap(Int.init) ?? 5
            connection.sendHead(status: 200, contentLength: bytes)
            for _ in 0..<bytes {
                if connection.waitForClose(milliseconds: interval) {
                    count(closedBy: request.key)
                    return false
                }
                guard connection.write("d") else { return false }
            }
            return true
        case "close":
            connection.send(status: 200, body: ok)
            return false
        case "echo":
            let echoed =
                "\(request.method) \(request.headers["x-echo"] ?? "-") \(String(decoding: request.body, as: UTF8.self))"
            return connection.send(status: 200, body: echoed, headers: ["X-Twice: 1", "X-Twice: 2"])
        default:
            return connection.send(status: 200, body: ok)
        }
    }

    private func count(closedBy key: String) {
        state.write { $0.closedByClient[key, default: 0] += 1 }
    }
}

/// A request, by the fault and key of its path.
private struct FaultServerRequest {
    let method: String
    let headers: [String: String]
    let body: [UInt8]
    let fault: String
    let key: String
    let query: [String: String]

    init(_ request: ServerRequest) {
        let components = request.components
        method = request.method
        headers = request.headers
        body = request.body
        fault = components.first.map(String.init) ?? ""
        key = components.dropFirst().first.map(String.init) ?? ""
        query = request.query
    }
}
