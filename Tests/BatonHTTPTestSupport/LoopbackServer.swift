import Dispatch

/// A route: a method and a path pattern whose `:name` components match any one component.
public struct LoopbackRoute: Sendable {
    /// A request, with the route's `:name` values, answered with a status and a text body.
    public typealias Handler = @Sendable (ServerRequest, _ parameters: [String: String]) async -> (Int, String)

    let method: String
    let pattern: [Substring]
    let handler: Handler

    public init(_ method: String, _ pattern: String, _ handler: @escaping Handler) {
        self.method = method
        self.pattern = pattern.split(separator: "/")
        self.handler = handler
    }

    /// The `:name` values when `request` matches, else `nil`.
    func match(_ request: ServerRequest) -> [String: String]? {
        let components = request.components
        guard request.method == method, components.count == pattern.count else { return nil }
        var parameters: [String: String] = [:]
        for (expected, actual) in zip(pattern, components) {
            if expected.first == ":" {
                parameters[String(expected.dropFirst())] = String(actual)
            } else if expected != actual {
                return nil
            }
        }
        return parameters
    }
}

/// A real HTTP/1.1 server on 127.0.0.1, on a port the system picks, serving `routes` for the
/// rest of the test process: a test talks to it through `URLSession`, never through a mock.
///
/// Each connection is served on a thread of its own, one request after another (keep-alive), and
/// each request's handler runs as a task, so a handler may wait for as long as its test needs
/// without holding up other connections. A request that no route matches gets 404.
public final class LoopbackServer: Sendable {
    private let listener: LoopbackListener

    /// The port the server listens on, bound when `init` returns.
    public var port: Int { listener.port }

    public init(routes: [LoopbackRoute]) throws {
        listener = try LoopbackListener { connection in
            while let request = connection.readRequest() {
                let (status, body) = Self.respond(to: request, routes: routes)
                let keepAlive = request.headers["connection"]?.lowercased() != "close"
                guard connection.send(status: status, body: body), keepAlive else { return }
            }
        }
    }

    /// The matching route's answer, waited for on the connection's thread.
    private static func respond(to request: ServerRequest, routes: [LoopbackRoute]) -> (Int, String) {
        for route in routes {
            guard let parameters = route.match(request) else { continue }
            let answered = DispatchSemaphore(value: 0)
            let answer = Answer()
            Task {
                answer.value = await route.handler(request, parameters)
                answered.signal()
            }
            answered.wait()
            return answer.value
        }
        return (404, "no route for \(request.method) \(request.path)")
    }
}

/// A handler's answer, handed from its task to the connection's thread: the semaphore orders the
/// write before the read.
private final class Answer: @unchecked Sendable {
    var value = (500, "")
}
