import Baton
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The "After" code of Baton.docc/MigratingFromDispatchGroups.md, verbatim; the blocks that are
// statements sit in the tests below.

func download(_ url: URL, using session: URLSession) -> Future<Data> {
    Future { promise in
        let task = session.get(url) { result in
            switch result {
            case .response(let data, let response):
                let status = (response as? HTTPURLResponse)?.statusCode ?? 0
                if (200..<300).contains(status) {
                    promise.succeed(data)
                } else {
                    promise.fail(HTTPStatusError(statusCode: status, data: data, response: response))
                }
            case .error(let error, _, _):
                promise.fail(error)
            }
        }
        promise.onCancel { task.cancel() }
    }
}

/// The body of a result, as text.
private func body(_ result: URLResult) -> String? {
    result.data.map { String(decoding: $0, as: UTF8.self) }
}

@Suite("Guide: waiting for two requests without a dispatch group", .timeLimit(.minutes(1)))
struct DispatchGroupGuideTests {
    @Test("URLSession.get(_:_:): both requests in flight together, the handler called once with both")
    func getPair() async throws {
        // Each /pair request is answered only once the other has reached the server: run one
        // after the other, they would both time out with a 504.
        let key = uniqueKey("page")
        let profileURL = try await GuideServer.url("/pair/\(key)")
        let avatarURL = try await GuideServer.url("/pair/\(key)")
        let session = makeSession()
        let calls = Protected(0)
        let both = Promise<(URLResult, URLResult)>()
        let show: @Sendable (URLResult, URLResult) -> Void = { profile, avatar in
            calls.write { $0 += 1 }
            both.succeed((profile, avatar))
        }

        session.get(profileURL, avatarURL) { profile, avatar in
            // Called once, when both are in; each is a response or an error.
            show(profile, avatar)
        }

        let (profile, avatar) = try await both.future.timeout(after: patience).value
        #expect(profile.statusCode == 200 && avatar.statusCode == 200)
        #expect(body(profile) == "pair \(key)" && body(avatar) == "pair \(key)")
        try await Task.sleep(for: .milliseconds(20))
        #expect(calls.value == 1)
    }

    @Test("URLSession.get(_:_:): one failing still delivers both outcomes")
    func getPairWithOneFailure() async throws {
        let key = uniqueKey("ok")
        let good = try await GuideServer.url("/text/\(key)")
        let both = Promise<(URLResult, URLResult)>()
        makeSession().get(refusedURL, good) { both.succeed(($0, $1)) }
        let (failed, succeeded) = try await both.future.timeout(after: patience).value
        #expect(failed.error != nil)
        #expect(succeeded.statusCode == 200 && body(succeeded) == key)
    }

    @Test("zip: both bodies, from requests in flight together")
    func zipBoth() async throws {
        let key = uniqueKey("zip")
        let profileURL = try await GuideServer.url("/pair/\(key)")
        let avatarURL = try await GuideServer.url("/pair/\(key)")
        let session = makeSession()

        let (profile, avatar) = try await zip(
            download(profileURL, using: session),
            download(avatarURL, using: session)
        ).value

        #expect(String(decoding: profile, as: UTF8.self) == "pair \(key)")
        #expect(String(decoding: avatar, as: UTF8.self) == "pair \(key)")
    }

    @Test("zip: a 404 on one side fails the pair with an HTTPStatusError, without waiting for the other")
    func zipFailsFast() async throws {
        let session = makeSession()
        let missing = try await GuideServer.url("/status/404")
        // Never answered in time on its own: its partner request never comes.
        let slow = try await GuideServer.url("/pair/\(uniqueKey("alone"))")
        let started = ContinuousClock.now
        do {
            _ = try await zip(download(missing, using: session), download(slow, using: session)).value
            Issue.record("zip succeeded with a 404 in it")
        } catch let error as HTTPStatusError {
            #expect(error.statusCode == 404)
            #expect(String(decoding: error.data, as: UTF8.self) == "status 404")
        }
        #expect(ContinuousClock.now - started < patience)
    }

    @Test("Future.all: every page, in the order of the URLs")
    func allPages() async throws {
        let session = makeSession()
        let names = (0..<8).map { uniqueKey("page\($0)") }
        var pageURLs: [URL] = []
        for name in names { pageURLs.append(try await GuideServer.url("/text/\(name)")) }

        let pages = try await Future.all(pageURLs.map { download($0, using: session) }).value

        #expect(pages.map { String(decoding: $0, as: UTF8.self) } == names)
    }

    @Test("Fetcher: two bodies with zip, then every page's outcome, in order, whatever its status")
    func fetcherBodiesAndResults() async throws {
        let session = makeSession()
        let profileURL = try await GuideServer.url("/text/\(uniqueKey("profile"))")
        let avatarURL = try await GuideServer.url("/text/\(uniqueKey("avatar"))")
        let names = (0..<6).map { uniqueKey("page\($0)") }
        var pageURLs: [URL] = []
        for name in names { pageURLs.append(try await GuideServer.url("/text/\(name)")) }
        pageURLs.append(try await GuideServer.url("/status/404"))

        let fetcher = Fetcher(session: session, maxConcurrentRequests: 4)
        let (profile, avatar) = try await zip(fetcher.body(of: profileURL), fetcher.body(of: avatarURL)).value
        let pages = try await fetcher.results(of: pageURLs, timeout: .seconds(30)).value

        #expect(String(decoding: profile, as: UTF8.self) == profileURL.lastPathComponent)
        #expect(String(decoding: avatar, as: UTF8.self) == avatarURL.lastPathComponent)
        #expect(pages.map(\.statusCode) == Array(repeating: 200, count: 6) + [404])
        #expect(pages.prefix(6).map(body) == names)
    }

    @Test("download: a refused connection is the session's error")
    func downloadRefused() async throws {
        await #expect(throws: URLError.self) { try await download(refusedURL, using: makeSession()).value }
    }
}
