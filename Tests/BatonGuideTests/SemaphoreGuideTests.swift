import Baton
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The "After" code of Baton.docc/MigratingFromSemaphoreWaits.md, verbatim.

func text(at url: URL, using session: URLSession) async throws -> String {
    let future = Future<String> { promise in
        let task = session.get(url) { result in
            if let data = result.data, result.error == nil {
                promise.succeed(String(decoding: data, as: UTF8.self))
            } else {
                promise.fail(result.error ?? URLError(.badServerResponse))
            }
        }
        promise.onCancel { task.cancel() }
    }
    return try await future.value
}

final class ThumbnailStore: Sendable {
    private let cache = MemoryCache<String, Data>(countLimit: 500)
    private let renders = AsyncSemaphore(value: 2)  // at most two renders at once
    private let render: @Sendable (String) async throws -> Data

    init(render: @escaping @Sendable (String) async throws -> Data) {
        self.render = render
    }

    func thumbnail(for name: String) async throws -> Data {
        try await cache.value(forKey: name) {
            try await renders.withPermit { try await render(name) }
        }
    }
}

final class SpellChecker: Sendable {
    private let words: AsyncLazy<Set<String>>

    init(load: @escaping @Sendable () async throws -> Set<String>) {
        words = AsyncLazy(load)
    }

    func isKnown(_ word: String) async throws -> Bool {
        try await words.value.contains(word)
    }
}

struct RenderFailed: Error, Equatable {}

@Suite("Guide: replacing a semaphore that waits for async work", .timeLimit(.minutes(1)))
struct SemaphoreGuideTests {
    @Test("text(at:using:) returns the body a real server sent")
    func textFromServer() async throws {
        let key = uniqueKey("hello")
        let url = try await GuideServer.url("/text/\(key)")
        #expect(try await text(at: url, using: makeSession()) == key)
    }

    @Test("text(at:using:) throws the connection error instead of returning nil")
    func textThrowsOnRefusedConnection() async throws {
        await #expect(throws: URLError.self) { try await text(at: refusedURL, using: makeSession()) }
    }

    @Test("Many more concurrent callers than threads: every one gets its text, no thread is blocked")
    func manyCallersOnThePool() async throws {
        let session = makeSession()
        let url = try await GuideServer.url("/text/many")
        let texts = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<32 { group.addTask { try await text(at: url, using: session) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(texts == Array(repeating: "many", count: 32))
    }

    @Test("ThumbnailStore: 50 concurrent callers for one name share one render")
    func oneRenderPerName() async throws {
        let renders = Occupancy()
        let gate = AsyncSemaphore(value: 0)
        let store = ThumbnailStore { name in
            try await renders.measure {
                try await gate.wait()  // held until every caller has asked
                return Data(name.utf8)
            }
        }
        try await withThrowingTaskGroup(of: Data.self) { group in
            for _ in 0..<50 { group.addTask { try await store.thumbnail(for: "cat") } }
            while renders.entries == 0 { try await Task.sleep(for: .milliseconds(1)) }
            try await Task.sleep(for: .milliseconds(50))
            gate.signal()
            for try await data in group { #expect(data == Data("cat".utf8)) }
        }
        #expect(renders.entries == 1)
        #expect(try await store.thumbnail(for: "cat") == Data("cat".utf8))
        #expect(renders.entries == 1)
    }

    @Test("ThumbnailStore: 12 names, 4 callers each, 64 pool-hungry tasks: 12 renders, never more than 2 at once")
    func rendersAreBounded() async throws {
        let renders = Occupancy()
        let store = ThumbnailStore { name in
            try await renders.measure {
                try await Task.sleep(for: .milliseconds(5))
                return Data(name.utf8)
            }
        }
        let names = (0..<12).map { "image-\($0)" }
        try await withThrowingTaskGroup(of: (String, Data).self) { group in
            for name in names {
                for _ in 0..<4 { group.addTask { (name, try await store.thumbnail(for: name)) } }
            }
            for try await (name, data) in group { #expect(data == Data(name.utf8)) }
        }
        #expect(renders.entries == names.count)
        #expect(renders.most <= 2)
        #expect(renders.most >= 1)
    }

    @Test("ThumbnailStore: a failed render is not cached; the next caller renders again")
    func failureIsNotCached() async throws {
        let attempts = Protected(0)
        let store = ThumbnailStore { name in
            let attempt = attempts.write { attempts in
                attempts += 1
                return attempts
            }
            if attempt == 1 { throw RenderFailed() }
            return Data(name.utf8)
        }
        await #expect(throws: RenderFailed()) { try await store.thumbnail(for: "dog") }
        #expect(try await store.thumbnail(for: "dog") == Data("dog".utf8))
        #expect(attempts.value == 2)
    }

    @Test("SpellChecker: 40 concurrent first readers, one load")
    func loadsOnce() async throws {
        let loads = Occupancy()
        let checker = SpellChecker {
            try await loads.measure {
                try await Task.sleep(for: .milliseconds(20))
                return ["baton", "lock"]
            }
        }
        let answers = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<40 { group.addTask { try await checker.isKnown(index.isMultiple(of: 2) ? "baton" : "x") } }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(answers.filter { $0 }.count == 20)
        #expect(loads.entries == 1)
        #expect(try await checker.isKnown("lock"))
        #expect(loads.entries == 1)
    }

    @Test("SpellChecker: a failed load reaches the reader, and the next read loads again")
    func failedLoadIsRetried() async throws {
        let attempts = Protected(0)
        let checker = SpellChecker {
            let attempt = attempts.write { attempts in
                attempts += 1
                return attempts
            }
            if attempt == 1 { throw RenderFailed() }
            return ["baton"]
        }
        await #expect(throws: RenderFailed()) { try await checker.isKnown("baton") }
        #expect(try await checker.isKnown("baton"))
        #expect(attempts.value == 2)
    }
}

// The "After: waits that end" code of Baton.docc/MigratingFromSemaphoreWaits.md, verbatim.

final class BoundedClient: Sendable {
    private let slots: AsyncSemaphore
    private let queueing: Duration
    private let running: Duration
    private let send: @Sendable (URL) async throws -> Data

    init(width: Int, queueing: Duration, running: Duration, send: @escaping @Sendable (URL) async throws -> Data) {
        slots = AsyncSemaphore(value: width)
        self.queueing = queueing
        self.running = running
        self.send = send
    }

    func data(from url: URL) async throws -> Data {
        try await slots.wait(timeout: queueing)  // TimeoutError: queued too long
        defer { slots.signal() }
        return try await withTimeout(running) {  // TimeoutError: too slow, cancelled
            try await send(url)
        }
    }
}

/// A request that a test holds until it lets it go: it reports when it has started, and ends
/// when cancelled.
final class HeldRequests: Sendable {
    private let started = Protected([String: Promise<Void>]())
    private let released = Protected([String: Promise<Data>]())

    func send(_ url: URL) async throws -> Data {
        let key = url.lastPathComponent
        promise(key, in: started).succeed()
        return try await promise(key, in: released).future.value
    }

    func started(_ key: String) async throws {
        try await promise(key, in: started).future.value
    }

    func release(_ key: String, with data: Data) {
        promise(key, in: released).succeed(data)
    }

    private func promise<T>(_ key: String, in table: Protected<[String: Promise<T>]>) -> Promise<T> {
        table.write { table in
            if let promise = table[key] { return promise }
            let promise = Promise<T>()
            table[key] = promise
            return promise
        }
    }
}

@Suite("Guide: waits that end", .timeLimit(.minutes(1)))
struct BoundedClientGuideTests {
    @Test("BoundedClient returns the body a real server sent")
    func answers() async throws {
        let session = makeSession()
        let client = BoundedClient(width: 2, queueing: .seconds(30), running: .seconds(30)) { url in
            try await session.data(from: url).0
        }
        let key = uniqueKey("bounded")
        let data = try await client.data(from: GuideServer.url("/text/\(key)"))
        #expect(String(decoding: data, as: UTF8.self) == key)
    }

    @Test("A caller queued behind a full client times out with TimeoutError and takes no slot")
    func queueTimesOut() async throws {
        let held = HeldRequests()
        let client = BoundedClient(width: 1, queueing: .milliseconds(20), running: .seconds(30), send: held.send)
        let holder = Task { try await client.data(from: URL(string: "http://127.0.0.1/holder")!) }
        try await held.started("holder")  // it holds the only slot
        await #expect(throws: TimeoutError.self) {
            try await client.data(from: URL(string: "http://127.0.0.1/queued")!)
        }
        held.release("holder", with: Data("held".utf8))
        #expect(try await holder.value == Data("held".utf8))
        // The timed-out caller took no slot: the next caller gets it.
        let next = Task { try await client.data(from: URL(string: "http://127.0.0.1/next")!) }
        try await held.started("next")
        held.release("next", with: Data("next".utf8))
        #expect(try await next.value == Data("next".utf8))
    }

    @Test("A request slower than `running` is cancelled and ends with TimeoutError, freeing its slot")
    func requestTimesOut() async throws {
        let held = HeldRequests()
        let client = BoundedClient(width: 1, queueing: .seconds(30), running: .milliseconds(200), send: held.send)
        // Never released: only its cancellation ends it.
        await #expect(throws: TimeoutError.self) {
            try await client.data(from: URL(string: "http://127.0.0.1/slow")!)
        }
        // Its slot is free: the next request (answered at once) gets it.
        held.release("after", with: Data("after".utf8))
        #expect(try await client.data(from: URL(string: "http://127.0.0.1/after")!) == Data("after".utf8))
    }
}
