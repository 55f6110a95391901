import NIOCore
import NIOHTTP1
import NIOPosix

/// The HTTP/1.1 server the http scenario measures against, on 127.0.0.1 in the bench's own
/// process, over SwiftNIO on one event loop thread: `GET /bytes/<n>` answers `200` with a body
/// of `n` bytes (at most ``largestBody``), from buffers made once, and keeps the connection
/// alive unless the request asks to close it. Anything else is `404`.
final class BenchHTTPServer: Sendable {
    /// The longest body served.
    static let largestBody = 1 << 20

    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let channel: any Channel
    /// The port the system picked.
    let port: Int

    init() throws {
        let body = ByteBuffer(repeating: UInt8(ascii: "b"), count: Self.largestBody)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(BodyHandler(body: body))
                }
            }
        do {
            channel = try bootstrap.bind(host: "127.0.0.1", port: 0).wait()
        } catch {
            try? group.syncShutdownGracefully()
            throw error
        }
        port = channel.localAddress?.port ?? 0
    }

    /// The URL of a body of `bytes` bytes; `request` makes URLs distinct, so that no client
    /// coalesces or caches two requests.
    func url(bytes: Int, request: Int) -> String {
        "http://127.0.0.1:\(port)/bytes/\(bytes)?r=\(request)"
    }

    func shutdown() {
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }
}

/// Answers each request on one connection: a slice of the body buffer, or 404.
private final class BodyHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let body: ByteBuffer
    private var head: HTTPRequestHead?

    init(body: ByteBuffer) {
        self.body = body
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body: break
        case .end:
            guard let head else { return }
            self.head = nil
            respond(to: head, context: context)
        }
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        let path = head.uri.split(separator: "?", maxSplits: 1).first ?? ""
        let parts = path.split(separator: "/")
        let bytes = parts.count == 2 && parts[0] == "bytes" ? Int(parts[1]) : nil
        let slice = bytes.flatMap { (0...body.readableBytes).contains($0) ? body.getSlice(at: 0, length: $0) : nil }
        var headers = HTTPHeaders()
        headers.add(name: "Content-Length", value: "\(slice?.readableBytes ?? 0)")
        if !head.isKeepAlive { headers.add(name: "Connection", value: "close") }
        let status: HTTPResponseStatus = slice == nil ? .notFound : .ok
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))),
            promise: nil)
        if let slice { context.write(wrapOutboundOut(.body(.byteBuffer(slice))), promise: nil) }
        guard !head.isKeepAlive else { return context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil) }
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in bound.value.close(promise: nil) }
    }
}
