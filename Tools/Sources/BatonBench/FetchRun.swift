import BatonFutures
import BatonHTTP
import BatonLocks
import BatonTesting
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What `baton fetch` does: fetch URLs in parallel through a ``Fetcher``, report progress, and
/// describe each result and the whole run.
public struct FetchRun: Sendable {
    /// The outcome of one URL.
    public struct Line: Sendable, Equatable {
        public var url: URL
        /// The HTTP status, if a response arrived.
        public var status: Int?
        /// Bytes of body received.
        public var bytes: Int
        /// Time on the wire of the last attempt (waiting for a slot not included).
        public var time: Duration
        /// Why no response arrived, if none did.
        public var error: String?

        /// Whether a 2xx response arrived.
        public var succeeded: Bool { status.map { (200..<300).contains($0) } ?? false }
    }

    public let urls: [URL]
    public let maxConcurrent: Int
    public let requestTimeout: Duration?
    public let attempts: Int

    public init(urls: [URL], maxConcurrent: Int, requestTimeout: Duration? = .seconds(30), attempts: Int = 3) {
        precondition(maxConcurrent >= 1, "FetchRun: maxConcurrent must be at least 1")
        self.urls = urls
        self.maxConcurrent = maxConcurrent
        self.requestTimeout = requestTimeout
        self.attempts = attempts
    }

    /// Fetches every URL and returns one line per URL, in the order of ``urls``; `progress`
    /// receives (finished, total) each time a URL finishes, on any thread.
    @available(
        *, noasync, message: "run blocks until every URL is fetched; use runAsync", renamed: "runAsync(progress:)"
    )
    public func run(progress: @escaping @Sendable (Int, Int) -> Void = { _, _ in }) throws -> [Line] {
        try start(progress: progress).wait()
    }

    /// Fetches every URL and returns one line per URL, in the order of ``urls``.
    public func runAsync(progress: @escaping @Sendable (Int, Int) -> Void = { _, _ in }) async throws -> [Line] {
        try await start(progress: progress).value
    }

    private func start(progress: @escaping @Sendable (Int, Int) -> Void) -> Future<[Line]> {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = max(maxConcurrent, configuration.httpMaximumConnectionsPerHost)
        let transport = TimingTransport(session: URLSession(configuration: configuration))
        let fetcher = Fetcher(
            transport: transport, maxConcurrentRequests: maxConcurrent,
            retryPolicy: .init(
                attempts: attempts, backoff: .jittered(initial: .milliseconds(100), maximum: .seconds(2))),
            requestTimeout: requestTimeout)
        let finished = Protected(0)
        let total = urls.count
        let lines = urls.map { url in
            fetcher.result(of: url).map { result -> Line in
                let done = finished.write { count -> Int in
                    count += 1
                    return count
                }
                progress(done, total)
                return Line(
                    url: url, status: result.statusCode, bytes: result.data?.count ?? 0,
                    time: transport.lastAttemptTime(url), error: result.error.map(Self.describe))
            }
        }
        return Future.all(lines).map { lines in
            withExtendedLifetime(fetcher) {}
            transport.session.finishTasksAndInvalidate()
            return lines
        }
    }

    /// A short description of a request error: Foundation's message when it has one.
    static func describe(_ error: any Error) -> String {
        let nsError = error as NSError
        let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError
        if let message =
            (nsError.userInfo[NSLocalizedDescriptionKey] ?? underlying?.userInfo[NSLocalizedDescriptionKey]) as? String
        {
            return message
        }
        return "\(error)"
    }

    /// One line for a URL: status, bytes, time, URL.
    public static func describe(_ line: Line) -> String {
        let status = line.status.map { "\($0)" } ?? "ERR"
        let bytes = "\(line.bytes) B".leftPadded(to: 10)
        let time = "\(formatted(line.time.nanoseconds / 1e6, digits: 1)) ms".leftPadded(to: 10)
        let error = line.error.map { "  (\($0))" } ?? ""
        return "\(status.leftPadded(to: 3))  \(bytes)  \(time)  \(line.url.absoluteString)\(error)"
    }

    /// The closing summary: counts, bytes and wall time.
    public static func summary(_ lines: [Line], elapsed: Duration) -> String {
        let succeeded = lines.filter(\.succeeded).count
        let bytes = lines.reduce(0) { $0 + $1.bytes }
        let seconds = elapsed.nanoseconds / 1e9
        return "\(lines.count) URLs: \(succeeded) ok, \(lines.count - succeeded) failed; \(bytes) bytes in "
            + "\(formatted(seconds, digits: 2)) s (\(formatted(seconds > 0 ? Double(bytes) / seconds / 1024 : 0, digits: 1)) KiB/s)"
    }

    /// A progress bar such as `[#########...........]  9/20`.
    public static func progressBar(done: Int, total: Int, width: Int = 30) -> String {
        let filled = total == 0 ? width : width * done / total
        return "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
            + "] \(done)/\(total)"
    }
}

/// Passes requests on to a session and remembers how long each URL's last attempt took.
final class TimingTransport: HTTPTransport {
    let session: URLSession
    private let times = Protected<[URL: Duration]>([:])

    init(session: URLSession) {
        self.session = session
    }

    func send(_ request: URLRequest, completion: @escaping @Sendable (URLResult) -> Void) -> any HTTPTransportTask {
        let start = ContinuousClock.now
        return session.send(request) { result in
            if let url = request.url { self.times.write { $0[url] = ContinuousClock.now - start } }
            completion(result)
        }
    }

    func lastAttemptTime(_ url: URL) -> Duration {
        times.read { $0[url] } ?? .zero
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
