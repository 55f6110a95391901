import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A request as an HTTP/1.1 client sent it.
public struct ServerRequest: Sendable {
    /// `GET`, `POST`, …
    public let method: String
    /// The path, without its query: `/hello/abc`.
    public let path: String
    /// The query's names and values, percent-decoded (the last one wins for a repeated name).
    public let query: [String: String]
    /// The headers, by lowercased name.
    public let headers: [String: String]
    /// The body (read by `Content-Length`), empty for a request without one.
    public let body: [UInt8]

    /// The path's components: `["hello", "abc"]` for `/hello/abc`.
    public var components: [Substring] { path.split(separator: "/") }

    /// Parses a request line and its headers; `nil` if they are not HTTP/1.1's.
    init?(head: String) {
        let lines = head.split(separator: "\r\n")
        let requestLine = lines.first?.split(separator: " ") ?? []
        guard requestLine.count == 3 else { return nil }
        method = String(requestLine[0])
        let target = requestLine[1].split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let decode = { (text: Substring) in String(text).removingPercentEncoding ?? String(text) }
        path = decode(target[0])
        var query: [String: String] = [:]
        for pair in target.dropFirst().first?.split(separator: "&") ?? [] {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            query[decode(parts[0])] = parts.count == 2 ? decode(parts[1]) : ""
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { return nil }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        self.query = query
        self.headers = headers
        body = []
    }

    private init(_ head: ServerRequest, body: [UInt8]) {
        (method, path, query, headers) = (head.method, head.path, head.query, head.headers)
        self.body = body
    }

    func with(body: [UInt8]) -> ServerRequest { ServerRequest(self, body: body) }
}

/// Listens on 127.0.0.1, on a port the system picks, for the rest of the test process, and
/// serves each connection it accepts on a thread of its own, closing it when `serve` returns.
public final class LoopbackListener: Sendable {
    /// The port, bound when `init` returns.
    public let port: Int
    private let socket: Int32
    private let serve: @Sendable (ServerConnection) -> Void

    /// Binds and listens at once, then accepts on a thread of its own.
    public init(serve: @escaping @Sendable (ServerConnection) -> Void) throws {
        #if canImport(Glibc)
        let listener = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let listener = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard listener >= 0 else { throw ListenError(step: "socket", code: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let failedStep = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address -> String? in
                if bind(listener, address, length) != 0 { return "bind" }
                if listen(listener, 512) != 0 { return "listen" }
                if getsockname(listener, address, &length) != 0 { return "getsockname" }
                return nil
            }
        }
        if let failedStep {
            let code = errno
            _ = systemClose(listener)
            throw ListenError(step: failedStep, code: code)
        }
        socket = listener
        port = Int(UInt16(bigEndian: address.sin_port))
        self.serve = serve
        Thread.detachNewThread { [self] in acceptConnections() }
    }

    private func acceptConnections() {
        while true {
            let connection = accept(socket, nil, nil)
            if connection < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            var on: Int32 = 1
            setsockopt(connection, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
            #if canImport(Darwin)
            setsockopt(connection, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
            #endif
            Thread.detachNewThread { [self] in
                let served = ServerConnection(socket: connection)
                serve(served)
                served.close()
            }
        }
    }

    /// Why the listener could not start.
    public struct ListenError: Error, CustomStringConvertible {
        public let step: String
        public let code: Int32
        public var description: String { "loopback listener: \(step) failed: \(String(cString: strerror(code)))" }
    }
}

/// One accepted connection, read through a buffer and used by its thread alone.
public final class ServerConnection {
    private let socket: Int32
    private var buffer: [UInt8] = []
    private var closed = false

    init(socket: Int32) { self.socket = socket }

    /// The next request, its body included; `nil` once the client is gone or sent something that
    /// is not a request. Answers `Expect: 100-continue` before reading the body.
    public func readRequest() -> ServerRequest? {
        let end = Array("\r\n\r\n".utf8)
        var headEnd = buffer.firstRange(of: end)
        while headEnd == nil {
            guard buffer.count < 64 * 1024, fill() else { return nil }
            headEnd = buffer.firstRange(of: end)
        }
        let head = String(decoding: buffer[..<headEnd!.lowerBound], as: UTF8.self)
        buffer.removeFirst(headEnd!.upperBound)
        guard let request = ServerRequest(head: head) else { return nil }
        if request.headers["expect"]?.lowercased() == "100-continue" { write("HTTP/1.1 100 Continue\r\n\r\n") }
        let length = request.headers["content-length"].flatMap { Int($0) } ?? 0
        while buffer.count < length {
            guard fill() else { return nil }
        }
        defer { buffer.removeFirst(length) }
        return request.with(body: Array(buffer.prefix(length)))
    }

    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer += chunk.prefix(count)
                return true
            }
            if count < 0 && errno == EINTR { continue }
            return false
        }
    }

    /// Sends a status line and headers, with `Content-Length: contentLength`.
    @discardableResult
    public func sendHead(status: Int, contentLength: Int, headers: [String] = []) -> Bool {
        let lines = ["HTTP/1.1 \(status) \(Self.reason(status))", "Content-Length: \(contentLength)"] + headers
        return write(lines.joined(separator: "\r\n") + "\r\n\r\n")
    }

    /// Sends a whole response; returns whether every byte went out.
    @discardableResult
    public func send(status: Int, body: String, headers: [String] = []) -> Bool {
        sendHead(status: status, contentLength: body.utf8.count, headers: headers) && write(body)
    }

    /// Sends `text` as it is; returns whether every byte went out.
    @discardableResult
    public func write(_ text: String) -> Bool {
        #if canImport(Darwin)
        let flags: Int32 = 0
        #else
        let flags = Int32(MSG_NOSIGNAL)
        #endif
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let sent = bytes.withUnsafeBytes { systemSend(socket, $0.baseAddress, $0.count, flags) }
            if sent < 0 && errno == EINTR { continue }
            if sent <= 0 { return false }
            bytes = bytes.dropFirst(sent)
        }
        return true
    }

    /// Waits up to `milliseconds` (forever if `nil`) for the client to close the connection;
    /// returns whether it did. Anything the client sends meanwhile is dropped.
    public func waitForClose(milliseconds: Int? = nil) -> Bool {
        let deadline = milliseconds.map { DispatchTime.now().uptimeNanoseconds + UInt64($0) * 1_000_000 }
        while true {
            let now = DispatchTime.now().uptimeNanoseconds
            if let deadline, now >= deadline { return false }
            let wait = deadline.map { Int32(min(10, ($0 - now) / 1_000_000 + 1)) } ?? 10
            var poller = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            if poll(&poller, 1, wait) > 0 {
                var scratch = [UInt8](repeating: 0, count: 4096)
                let count = scratch.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
                if count <= 0 { return true }
            }
        }
    }

    /// Closes with a reset (RST) instead of an orderly shutdown.
    public func reset() {
        var linger = linger(l_onoff: 1, l_linger: 0)
        setsockopt(socket, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
        close()
    }

    /// Closes the connection (once; later calls do nothing).
    public func close() {
        guard !closed else { return }
        closed = true
        _ = systemClose(socket)
    }

    private static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 400: "Bad Request"
        case 404: "Not Found"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: "Status"
        }
    }
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
