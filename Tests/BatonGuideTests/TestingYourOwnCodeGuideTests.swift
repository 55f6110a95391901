import Baton
import BatonTestSupport
import BatonTesting
import Testing

// The code of Sources/BatonTesting/BatonTesting.docc/TestingYourOwnConcurrentCode.md, every
// block verbatim (Scripts/check-guides checks it): each buggy type's check fails, and each
// fix's check passes. The `@Synchronized` fix is in TestingYourOwnCodeGuide+Synchronized.swift.

// MARK: A counter whose every accessor is locked

/// Counts page views; every access to `count` takes the lock.
final class ViewCounter: @unchecked Sendable {  // `lock` guards `storage`
    private let lock = Lock()
    private var storage = 0

    var count: Int {
        get { lock.withLock { storage } }
        set { lock.withLock { storage = newValue } }
    }
}

/// A counter, one operation at a time: `increment` returns nothing, `read` the count.
struct CounterModel: SequentialModel {
    enum Operation: Sendable { case increment, read }

    var initialState: Int { 0 }

    func step(_ count: Int, _ operation: Operation, _ output: Int?) -> Int? {
        switch operation {
        case .increment: count + 1
        case .read: output == count ? count : nil
        }
    }

    func describe(_ operation: Operation, _ output: Int?) -> String {
        output.map { "\(operation) → \($0)" } ?? "\(operation)"
    }
}

// MARK: A check-then-act cache

/// Hands out one session token per user, made on first use.
final class TokenStore: @unchecked Sendable {  // `lock` guards `tokens` and `issued`
    private let lock = Lock()
    private var tokens: [String: Int] = [:]
    private var issued = 0

    func token(for user: String) -> Int {
        if let token = lock.withLock({ tokens[user] }) { return token }
        let token = lock.withLock {
            issued += 1
            return issued
        }
        lock.withLock { tokens[user] = token }
        return token
    }
}

/// A get-or-insert cache, one call at a time: the first call for a key may return any value,
/// and every later call for that key returns the same one.
struct GetOrInsertModel: SequentialModel {
    enum Operation: Sendable { case value(forKey: String) }

    var initialState: [String: Int] { [:] }

    func step(_ stored: [String: Int], _ operation: Operation, _ output: Int) -> [String: Int]? {
        switch operation {
        case .value(let key):
            guard let value = stored[key] else {
                var stored = stored
                stored[key] = output
                return stored
            }
            return value == output ? stored : nil
        }
    }
}

final class ProtectedTokenStore: Sendable {
    private let state = Protected((tokens: [String: Int](), issued: 0))

    func token(for user: String) -> Int {
        state.write { state in
            if let token = state.tokens[user] { return token }
            state.issued += 1
            state.tokens[user] = state.issued
            return state.issued
        }
    }
}

final class CachedTokenStore: Sendable {
    private let tokens = MemoryCache<String, Int>()
    private let issued = Protected(0)

    func token(for user: String) -> Int {
        tokens.value(forKey: user) {
            issued.write { issued in
                issued += 1
                return issued
            }
        }
    }
}

// MARK: An actor that downloads twice

actor AvatarCache {
    private var avatars: [String: Int] = [:]
    private var downloads = 0

    func avatar(for user: String) async -> Int {
        if let avatar = avatars[user] { return avatar }
        let avatar = await download(user)
        avatars[user] = avatar
        return avatar
    }

    /// Each download is a new image: here, a new number.
    private func download(_ user: String) async -> Int {
        downloads += 1
        let avatar = downloads
        await Task.yield()  // stands for the network
        return avatar
    }
}

actor LockedAvatarCache {
    private var avatars: [String: Int] = [:]
    private var downloads = 0
    private let downloading = AsyncLock()

    func avatar(for user: String) async throws -> Int {
        try await downloading.withLock {
            if let avatar = avatars[user] { return avatar }
            let avatar = await download(user)
            avatars[user] = avatar
            return avatar
        }
    }

    private func download(_ user: String) async -> Int {
        downloads += 1
        let avatar = downloads
        await Task.yield()  // stands for the network
        return avatar
    }
}

final class SharedAvatarCache: Sendable {
    private let avatars = MemoryCache<String, Int>()
    private let downloads = Protected(0)

    func avatar(for user: String) async throws -> Int {
        try await avatars.value(forKey: user) { await self.download(user) }
    }

    private func download(_ user: String) async -> Int {
        let avatar = downloads.write { downloads in
            downloads += 1
            return downloads
        }
        await Task.yield()  // stands for the network
        return avatar
    }
}

@Suite("Guide: testing your own concurrent code", .serialized, .timeLimit(.minutes(1)))
struct TestingYourOwnCodeGuideTests {
    @Test("The accessor-locked counter loses increments")
    func viewCounterLosesIncrements() throws {
        // Real threads race only while both run at once: on a machine busy with other work a
        // check can spend its budget with one thread descheduled, so up to five checks.
        var found: LinearizabilityReport?
        for _ in 1...5 where found == nil {
            let check = LinearizabilityCheck(
                model: CounterModel(), operations: [.increment, .read],
                make: { ViewCounter() },
                perform: { counter, operation in
                    switch operation {
                    case .increment:
                        counter.count += 1
                        return nil
                    case .read:
                        return counter.count
                    }
                })
            let report = try check.run()
            print(report)
            if report.outcome == .notLinearizable { found = report }
        }
        #expect(found?.outcome == .notLinearizable)
        #expect(found?.failingSeed != nil)
    }

    @Test("A counter in Protected counts every increment")
    func protectedCounterPasses() {
        let check = LinearizabilityCheck(
            model: CounterModel(), operations: [.increment, .read],
            make: { Protected(0) },
            perform: { counter, operation in
                switch operation {
                case .increment:
                    counter.write { $0 += 1 }
                    return nil
                case .read:
                    return counter.value
                }
            })
        check.expectLinearizable()
    }

    @Test("The check-then-act token store hands out two tokens for one user")
    func tokenStoreHandsOutTwoTokens() throws {
        // Real threads race only while both run at once: on a machine busy with other work a
        // check can spend its budget with one thread descheduled, so up to five checks.
        var found: LinearizabilityReport?
        for _ in 1...5 where found == nil {
            let check = LinearizabilityCheck(
                model: GetOrInsertModel(), operations: [.value(forKey: "ada"), .value(forKey: "grace")],
                make: { TokenStore() },
                perform: { store, operation in
                    switch operation {
                    case .value(let user): store.token(for: user)
                    }
                })
            let report = try check.run()
            print(report)
            if report.outcome == .notLinearizable { found = report }
        }
        #expect(found?.outcome == .notLinearizable)
    }

    @Test("One Protected.write hands out one token per user")
    func protectedTokenStorePasses() {
        let check = LinearizabilityCheck(
            model: GetOrInsertModel(), operations: [.value(forKey: "ada"), .value(forKey: "grace")],
            make: { ProtectedTokenStore() },
            perform: { store, operation in
                switch operation {
                case .value(let user): store.token(for: user)
                }
            })
        check.expectLinearizable()
    }

    @Test("MemoryCache's get-or-insert hands out one token per user")
    func cachedTokenStorePasses() {
        let check = LinearizabilityCheck(
            model: GetOrInsertModel(), operations: [.value(forKey: "ada"), .value(forKey: "grace")],
            make: { CachedTokenStore() },
            perform: { store, operation in
                switch operation {
                case .value(let user): store.token(for: user)
                }
            })
        check.expectLinearizable()
    }

    @Test("The actor cache downloads one avatar twice, found by the deterministic scheduler")
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func avatarCacheDownloadsTwice() async throws {
        let check = AsyncLinearizabilityCheck(
            model: GetOrInsertModel(), operations: [.value(forKey: "ada"), .value(forKey: "grace")],
            make: { AvatarCache() },
            perform: { cache, operation in
                switch operation {
                case .value(let user): await cache.avatar(for: user)
                }
            })
        let report = try await check.run(seed: 42)
        print(report)
        #expect(report.outcome == .notLinearizable)
        // The same seed, the same interleaving: the replay fails in its first round.
        let replay = try await check.run(seed: report.failingSeed!)
        #expect(replay.outcome == .notLinearizable)
        #expect(replay.rounds == 1)
    }

    @Test("An AsyncLock around check, download and update downloads once")
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func lockedAvatarCachePasses() async {
        let check = AsyncLinearizabilityCheck(
            model: GetOrInsertModel(), operations: [.value(forKey: "ada"), .value(forKey: "grace")],
            make: { LockedAvatarCache() },
            perform: { cache, operation in
                switch operation {
                // `withLock` throws only for a cancelled task or a re-entry: neither happens here.
                case .value(let user): try! await cache.avatar(for: user)
                }
            })
        await check.expectLinearizable()
    }

    @Test("MemoryCache's single flight downloads once")
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func sharedAvatarCachePasses() async {
        let check = AsyncLinearizabilityCheck(
            model: GetOrInsertModel(), operations: [.value(forKey: "ada"), .value(forKey: "grace")],
            make: { SharedAvatarCache() },
            perform: { cache, operation in
                switch operation {
                // The download never throws, so neither does the flight.
                case .value(let user): try! await cache.avatar(for: user)
                }
            })
        await check.expectLinearizable()
    }
}

/// The detection table of the article's bugs: set `BATON_DETECTION_RUNS` to run it (see
/// `DetectionTable`). The checks are the article's, with a fresh seed each run.
@Suite(.serialized, .timeLimit(.minutes(60)))
struct GuideDetectionTableTests {
    @Test func article() async throws {
        guard let runs = DetectionTable.detectionRuns else { return }
        var rows = [
            DetectionTable.Row(
                type: "ViewCounter", bug: "lost update (`+=` on locked accessors)", expected: .notLinearizable
            ) {
                try LinearizabilityCheck(
                    model: CounterModel(), operations: [.increment, .read], make: { ViewCounter() },
                    perform: { counter, operation in
                        switch operation {
                        case .increment:
                            counter.count += 1
                            return nil
                        case .read:
                            return counter.count
                        }
                    }
                ).run()
            },
            DetectionTable.Row(type: "TokenStore", bug: "check-then-act", expected: .notLinearizable) {
                try LinearizabilityCheck(
                    model: GetOrInsertModel(), operations: [.value(forKey: "ada"), .value(forKey: "grace")],
                    make: { TokenStore() },
                    perform: { store, operation in
                        switch operation {
                        case .value(let user): store.token(for: user)
                        }
                    }
                ).run()
            },
        ]
        if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
            rows.append(
                DetectionTable.Row(type: "AvatarCache (actor)", bug: "actor re-entrancy", expected: .notLinearizable) {
                    try await AsyncLinearizabilityCheck(
                        model: GetOrInsertModel(), operations: [.value(forKey: "ada"), .value(forKey: "grace")],
                        make: { AvatarCache() },
                        perform: { cache, operation in
                            switch operation {
                            case .value(let user): await cache.avatar(for: user)
                            }
                        }
                    ).run()
                })
        }
        let table = try await DetectionTable.measure(rows, bugRuns: runs, correctRuns: 0)
        print("The article's bugs:\n\(table)")
    }
}
