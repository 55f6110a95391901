import BatonLocks
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An HTTP/1.1 server on 127.0.0.1 over plain sockets that misbehaves on purpose, one thread per
/// connection, started once for the test process. Connections are kept alive between requests
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

    let port: Int
    private let listener: Int32
    private let state = Protected(State())

    struct StartError: Error, CustomStringConvertible {
        let step: String
        let code: Int32
        var description: String { "FaultServer: \(step) failed, errno \(code)" }
    }

    private init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw StartError(step: "socket", code: errno) }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else { throw StartError(step: "bind", code: errno) }
        guard listen(fd, 128) == 0 else { throw StartError(step: "listen", code: errno) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw StartError(step: "getsockname", code: errno) }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptLoop() }
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

    private func acceptLoop() {
        while true {
            let connection = accept(listener, nil, nil)
            if connection < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            var noDelay: Int32 = 1
            setsockopt(connection, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
            state.write { $0.openConnections += 1 }
            Thread.detachNewThread { [self] in
                serve(Connection(fd: connection))
                state.write { $0.openConnections -= 1 }
            }
        }
    }

    private func serve(_ connection: Connection) {
        var answeredLast: String?
        defer {
            connection.close()
            if let answeredLast { state.write { $0.answered[answeredLast, default: 0] += 1 } }
        }
        while let request = connection.readRequest() {
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
    private func answer(_ request: FaultServerRequest, hit: Int, on connection: Connection) -> Bool {
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
        default:
            return connection.send(status: 200, body: ok)
        }
    }

    private func count(closedBy key: String) {
        state.write { $0.closedByClient[key, default: 0] += 1 }
    }
}

/// One accepted connection, used by one thread.
private final class Connection {
    let fd: Int32
    private var buffer: [UInt8] = []
    private var closed = false

    init(fd: Int32) {
        self.fd = fd
    }

    /// Reads the next request (its body too, if it has a `Content-Length`); `nil` at the end.
    func readRequest() -> FaultServerRequest? {
        var headerEnd: Int?
        while headerEnd == nil {
            headerEnd = buffer.firstRange(of: Array("\r\n\r\n".utf8))?.upperBound
            if headerEnd == nil, !fill() { return nil }
        }
        let head = String(decoding: buffer[..<headerEnd!], as: UTF8.self)
        buffer.removeFirst(headerEnd!)
        let lines = head.split(separator: "\r\n")
        let parts = lines.first?.split(separator: " ") ?? []
        guard parts.count >= 2 else { return nil }
        var bodyLength = 0
        for line in lines.dropFirst() where line.lowercased().hasPrefix("content-length:") {
            bodyLength = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) ?? 0
        }
        while buffer.count < bodyLength {
            if !fill() { return nil }
        }
        buffer.removeFirst(bodyLength)
        let components = URLComponents(string: String(parts[1]))
        let path = (components?.path ?? "").split(separator: "/").map(String.init)
        var query: [String: String] = [:]
        for item in components?.queryItems ?? [] { query[item.name] = item.value ?? "" }
        return FaultServerRequest(
            method: String(parts[0]), fault: path.first ?? "", key: path.dropFirst().first ?? "", query: query)
    }

    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return false }
        buffer.append(contentsOf: chunk[..<count])
        return true
    }

    func sendHead(status: Int, contentLength: Int, headers: [String] = []) {
        let lines = ["HTTP/1.1 \(status) Status", "Content-Length: \(contentLength)"] + headers
        write(lines.joined(separator: "\r\n") + "\r\n\r\n")
    }

    @discardableResult
    func send(status: Int, body: String, headers: [String] = []) -> Bool {
        sendHead(status: status, contentLength: body.utf8.count, headers: headers)
        return write(body)
    }

    @discardableResult
    func write(_ text: String) -> Bool {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let sent = bytes.withUnsafeBytes { systemSend(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return false }
            bytes = bytes.dropFirst(sent)
        }
        return true
    }

    /// Waits up to `milliseconds` (forever if `nil`) for the client to close the connection;
    /// returns whether it did. Anything the client sends meanwhile is dropped.
    func waitForClose(milliseconds: Int? = nil) -> Bool {
        let deadline = milliseconds.map { DispatchTime.now().uptimeNanoseconds + UInt64($0) * 1_000_000 }
        while true {
            let now = DispatchTime.now().uptimeNanoseconds
            if let deadline, now >= deadline { return false }
            let wait = deadline.map { Int32(min(10, ($0 - now) / 1_000_000 + 1)) } ?? 10
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&poller, 1, wait) > 0 {
                var scratch = [UInt8](repeating: 0, count: 4096)
                let count = scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if count <= 0 { return true }
            }
        }
    }

    /// Closes with a reset (RST) instead of an orderly shutdown.
    func reset() {
        var linger = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
        close()
    }

    func close() {
        guard !closed else { return }
        closed = true
        _ = systemClose(fd)
    }
}

private struct FaultServerRequest {
    let method: String
    let fault: String
    let key: String
    let query: [String: String]
}

#if canImport(Darwin)
private let systemClose = Darwin.close
private let systemSend = Darwin.send
#elseif canImport(Glibc)
private let systemClose = Glibc.close
private let systemSend = Glibc.send
#elseif canImport(Musl)
private let systemClose = Musl.close
private let systemSend = Musl.send
#endif
