import Baton
import BatonHTTPTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The "After" code of Baton.docc/MigratingFromBoundedParallelWork.md, verbatim.

func downloadAll(_ urls: [URL], using session: URLSession) async throws -> [Data] {
    try await urls.concurrentMap(maxConcurrency: 4) { url in
        let (data, response) = try await session.data(from: url)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw URLError(.badServerResponse) }
        return data
    }
}

func saveAll(_ urls: [URL], using session: URLSession, to store: MemoryCache<URL, Data>) async throws {
    try await urls.concurrentForEach(maxConcurrency: 4) { url in
        let (data, _) = try await session.data(from: url)
        store[url] = data
    }
}

func statuses(of urls: [URL], using session: URLSession) async throws -> [Result<Int, any Error>] {
    try await urls.concurrentMap(maxConcurrency: 4) { url in
        do {
            let (_, response) = try await session.data(from: url)
            return .success((response as? HTTPURLResponse)?.statusCode ?? 0)
        } catch {
            return .failure(error)
        }
    }
}

/// A server on 127.0.0.1 that counts the requests it is handling at once: `GET /slow/:value`
/// answers `value` after a few milliseconds, so that requests sent together overlap there.
private final class CountingServer: Sendable {
    static let shared = CountingServer()

    let occupancy = Occupancy()
    private let server: LoopbackServer

    private init() {
        server = try! LoopbackServer(routes: [
            LoopbackRoute("GET", "/slow/:value") { _, parameters in
                // The handlers run once the server exists: they reach it as `shared`.
                await CountingServer.shared.occupancy.measure {
                    try? await Task.sleep(for: .milliseconds(5))
                }
                return (200, parameters["value"]!)
            }
        ])
    }

    func url(_ value: String) -> URL {
        URL(string: "http://127.0.0.1:\(server.port)/slow/\(value)")!
    }
}

@Suite("Guide: bounding parallel work without a queue or a semaphore", .timeLimit(.minutes(1)))
struct BoundedParallelWorkGuideTests {
    @Test("downloadAll: every page, in the order of the URLs, never more than 4 requests at the server")
    func downloadAllInOrder() async throws {
        let names = (0..<12).map { uniqueKey("page\($0)") }
        let urls = names.map { CountingServer.shared.url($0) }
        let before = CountingServer.shared.occupancy.entries
        let pages = try await downloadAll(urls, using: makeSession())
        #expect(pages.map { String(decoding: $0, as: UTF8.self) } == names)
        #expect(CountingServer.shared.occupancy.entries - before == 12)
        #expect(CountingServer.shared.occupancy.most <= 4)
    }

    @Test("downloadAll: a 404 is the error thrown")
    func downloadAllFails() async throws {
        // The failing page alone: the first error cancels the requests still in flight, and on
        // Linux cancelling an async URLSession request just as it completes can deadlock
        // FoundationNetworking (its cancellation syncs on the session's queue while that queue
        // resumes the task). That the first error cancels the rest is ConcurrentMapTests' to show.
        let urls = [try await GuideServer.url("/status/404")]
        await #expect(throws: URLError(.badServerResponse)) { try await downloadAll(urls, using: makeSession()) }
    }

    @Test("saveAll: every body in the cache, under its URL")
    func saveAllStoresEveryBody() async throws {
        let names = (0..<10).map { uniqueKey("save\($0)") }
        var urls: [URL] = []
        for name in names { urls.append(try await GuideServer.url("/text/\(name)")) }
        let store = MemoryCache<URL, Data>()
        try await saveAll(urls, using: makeSession(), to: store)
        #expect(store.count == 10)
        for (url, name) in zip(urls, names) {
            #expect(store[url].map { String(decoding: $0, as: UTF8.self) } == name)
        }
    }

    @Test("statuses: every outcome, in order, failures included")
    func statusesKeepsGoing() async throws {
        let urls = [
            try await GuideServer.url("/text/\(uniqueKey("ok"))"), try await GuideServer.url("/status/404"),
            refusedURL, try await GuideServer.url("/status/503"),
        ]
        let outcomes = try await statuses(of: urls, using: makeSession())
        #expect(outcomes.count == 4)
        #expect((try? outcomes[0].get()) == 200)
        #expect((try? outcomes[1].get()) == 404)
        #expect(throws: URLError.self) { try outcomes[2].get() }
        #expect((try? outcomes[3].get()) == 503)
    }
}
