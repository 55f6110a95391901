import AsyncHTTPClient
import BatonHTTP
import BatonLocks
import Foundation
import NIOCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `Fetcher` over AsyncHTTPClient and over `URLSession`, against a bare AsyncHTTPClient loop
/// (and the same loop over the client's callback API, which is what an `HTTPTransport` is
/// built on), all fetching from one SwiftNIO server on 127.0.0.1 in this process: requests per
/// second and the median and 99th-percentile latency, at 1, 16 and 64 requests in flight, of
/// 1 KB and 1 MB bodies.
public struct HTTPScenario: Scenario {
    public let name = "http"
    public let summary =
        "Fetcher over AsyncHTTPClient and over URLSession vs a bare AsyncHTTPClient loop: requests/s, p50 and p99 latency"

    /// Requests per case in a full run, by body size.
    static let smallRequests = 6_000
    static let largeRequests = 600
    static let concurrencies = [1, 16, 64]
    static let bodies = [(name: "1 KB", bytes: 1_024), (name: "1 MB", bytes: 1 << 20)]

    static let anchor = "AsyncHTTPClient loop"
    static let callbackAnchor = "AsyncHTTPClient callback loop"
    static let transportAlone = "HTTPClientTransport alone"
    static let overClient = "Fetcher/AsyncHTTPClient"
    static let overSession = "Fetcher/URLSession"

    public init() {}

    public func run(_ options: BenchOptions, progress: BenchProgress) throws -> ScenarioReport {
        let server = try BenchHTTPServer()
        defer { server.shutdown() }
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = Self.concurrencies.max()!
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        defer { try? client.syncShutdown() }

        var sheet = SampleSheet()
        var counts: [String] = []
        for body in Self.bodies {
            let full = body.bytes < 1 << 20 ? Self.smallRequests : Self.largeRequests
            for concurrency in Self.concurrencies {
                let requests = options.count(full, minimum: concurrency * 2)
                let label = "\(concurrency) × \(body.name)"
                counts.append("\(label): \(requests)")
                let contenders: [(name: String, baton: Bool, run: HTTPLoad)] = [
                    (Self.anchor, false, .client(client)),
                    (Self.callbackAnchor, false, .clientCallbacks(client)),
                    (Self.transportAlone, true, .transport(HTTPClientTransport(client: client))),
                    (
                        Self.overClient, true,
                        .fetcher(
                            Fetcher(
                                transport: HTTPClientTransport(client: client), maxConcurrentRequests: concurrency,
                                retryPolicy: .none))
                    ),
                    (
                        Self.overSession, true,
                        .fetcher(
                            Fetcher(
                                session: URLSession(configuration: .ephemeral), maxConcurrentRequests: concurrency,
                                retryPolicy: .none))
                    ),
                ]
                // One unmeasured round each opens the connections every later round reuses.
                for contender in contenders {
                    progress("http: \(label) \(contender.name) warm-up")
                    _ = try contender.run.measure(
                        server: server, bytes: body.bytes, requests: concurrency * 2, concurrency: concurrency)
                }
                // Repetitions outermost, so a noisy moment hits one rep of every contender.
                for rep in 1...options.reps {
                    for contender in contenders {
                        progress("http: rep \(rep)/\(options.reps) \(label) (\(requests) requests) \(contender.name)")
                        let run = try contender.run.measure(
                            server: server, bytes: body.bytes, requests: requests, concurrency: concurrency)
                        sheet.record(
                            run.requestsPerSecond, case: label, contender: contender.name, baton: contender.baton,
                            unit: Unit.requestsPerSecond)
                        sheet.record(
                            run.percentile(50), case: "\(label) p50", contender: contender.name,
                            baton: contender.baton, unit: Unit.milliseconds)
                        sheet.record(
                            run.percentile(99), case: "\(label) p99", contender: contender.name,
                            baton: contender.baton, unit: Unit.milliseconds)
                    }
                }
            }
        }
        let results = sheet.results
        return ScenarioReport(
            scenario: name, cores: activeCores, quick: options.quick, results: results,
            notes: [
                "Requests/s: requests answered ÷ wall time from the first sent to the last answered, with that many in flight at once; higher is better. p50 and p99: each request's time from being asked for to its whole body in hand, in milliseconds; lower is better.",
                "Requests per case: \(counts.joined(separator: ", ")); each URL is distinct, so nothing is coalesced or cached. The server is SwiftNIO on one event loop thread in this process, on 127.0.0.1; AsyncHTTPClient runs on its default event loop group (one loop a core), with room for 64 connections to the host.",
                "The loop is what a user writes with AsyncHTTPClient alone: that many tasks, each awaiting `execute` and collecting the body, again and again. The callback loop is the same tasks over the client's callback API (`execute(request:deadline:)`, its `EventLoopFuture` awaited), the API an `HTTPTransport` is built on: between it and the loop is what that API costs, whoever uses it. The fetchers get the same tasks, each awaiting `body(of:)`, with `maxConcurrentRequests` equal to the tasks and no retries. \"HTTPClientTransport alone\" is the same tasks each awaiting the transport's `send`, no fetcher: between it and the loop is what the transport costs (a URLRequest in, an HTTPURLResponse out), between it and Fetcher/AsyncHTTPClient what the fetcher does per request.",
            ] + Self.findings(results))
    }

    /// The two ratios the scenario is for, per case: Fetcher over AsyncHTTPClient against the
    /// bare loop (goal: within 10%), and against Fetcher over URLSession.
    static func findings(_ results: [BenchResult]) -> [String] {
        func median(_ label: String, _ contender: String) -> Double? {
            results.first { $0.case == label && $0.contender == contender }?.median
        }
        var againstLoop: [String] = []
        var againstCallbacks: [String] = []
        var againstSession: [String] = []
        for body in bodies {
            for concurrency in concurrencies {
                let label = "\(concurrency) × \(body.name)"
                guard let fetcher = median(label, overClient) else { continue }
                if let loop = median(label, anchor) { againstLoop.append("\(label) \(format(fetcher / loop))") }
                if let callbacks = median(label, callbackAnchor), let loop = median(label, anchor) {
                    againstCallbacks.append("\(label) \(format(fetcher / callbacks)) (\(format(callbacks / loop)))")
                }
                if let session = median(label, overSession) {
                    againstSession.append("\(label) \(format(fetcher / session))")
                }
            }
        }
        return [
            "Fetcher/AsyncHTTPClient ÷ the bare loop, requests/s (goal ≥ 0.90): \(againstLoop.joined(separator: ", ")).",
            "Fetcher/AsyncHTTPClient ÷ the callback loop, requests/s (in brackets, the callback loop ÷ the bare loop): \(againstCallbacks.joined(separator: ", ")).",
            "Fetcher/AsyncHTTPClient ÷ Fetcher/URLSession, requests/s: \(againstSession.joined(separator: ", ")).",
        ]
    }

    private static func format(_ ratio: Double) -> String {
        String(format: "%.2f×", ratio)
    }
}

/// One way of sending the requests of a round.
enum HTTPLoad {
    /// AsyncHTTPClient's own `execute`, the body collected.
    case client(HTTPClient)
    /// AsyncHTTPClient's callback API: `execute(request:deadline:)`, its future awaited.
    case clientCallbacks(HTTPClient)
    /// A fetcher's `body(of:)`.
    case fetcher(Fetcher)
    /// The transport's `send`, with no fetcher: what the fetcher adds, and what the transport
    /// adds to the client, apart.
    case transport(HTTPClientTransport)

    /// What a round measured: its wall time and each request's latency.
    struct Round {
        let elapsed: Duration
        let latencies: [Duration]

        var requestsPerSecond: Double { Double(latencies.count) / elapsed.seconds }

        /// The `percent`th percentile of the latencies, in milliseconds (nearest rank).
        func percentile(_ percent: Int) -> Double {
            let sorted = latencies.sorted()
            let rank = max(0, Int((Double(percent) / 100 * Double(sorted.count)).rounded(.up)) - 1)
            return sorted[min(rank, sorted.count - 1)].seconds * 1_000
        }
    }

    /// Sends `requests` GETs of `bytes`-byte bodies, `concurrency` at a time, and checks that
    /// every body arrived whole.
    func measure(server: BenchHTTPServer, bytes: Int, requests: Int, concurrency: Int) throws -> Round {
        let latencies = Protected<[Duration]>([])
        latencies.write { $0.reserveCapacity(requests) }
        let next = Protected(0)
        let elapsed = timeTasks(concurrency) { _ in
            while true {
                let index = next.write { next in
                    defer { next += 1 }
                    return next
                }
                guard index < requests else { return }
                let url = server.url(bytes: bytes, request: index)
                let start = ContinuousClock.now
                let received = try await fetch(url)
                let latency = ContinuousClock.now - start
                guard received == bytes else { throw HTTPBenchError.shortBody(url: url, received: received) }
                latencies.write { $0.append(latency) }
            }
        }
        return Round(elapsed: elapsed, latencies: latencies.value)
    }

    /// Fetches `url` and returns the length of its body.
    private func fetch(_ url: String) async throws -> Int {
        switch self {
        case .client(let client):
            let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(60))
            guard response.status == .ok else { throw HTTPBenchError.status(url: url, code: Int(response.status.code)) }
            return try await response.body.collect(upTo: BenchHTTPServer.largestBody).readableBytes
        case .clientCallbacks(let client):
            let request = try HTTPClient.Request(url: url)
            let response = try await withCheckedThrowingContinuation { continuation in
                client.execute(request: request, deadline: .now() + .seconds(60)).whenComplete {
                    continuation.resume(with: $0)
                }
            }
            guard response.status == .ok else { throw HTTPBenchError.status(url: url, code: Int(response.status.code)) }
            return response.body?.readableBytes ?? 0
        case .fetcher(let fetcher):
            return try await fetcher.body(of: URL(string: url)!).value.count
        case .transport(let transport):
            let request = URLRequest(url: URL(string: url)!)
            let result = await withCheckedContinuation { continuation in
                _ = transport.send(request) { continuation.resume(returning: $0) }
            }
            guard result.statusCode == 200, let data = result.data else {
                throw HTTPBenchError.status(url: url, code: result.statusCode ?? 0)
            }
            return data.count
        }
    }
}

/// A round that did not get every body whole: the scenario fails rather than report it.
enum HTTPBenchError: Error, CustomStringConvertible {
    case shortBody(url: String, received: Int)
    case status(url: String, code: Int)

    var description: String {
        switch self {
        case .shortBody(let url, let received): "\(url): only \(received) bytes arrived"
        case .status(let url, let code): "\(url): status \(code)"
        }
    }
}
