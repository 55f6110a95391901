#if Lifecycle && Logging
import Baton
import Logging
import ServiceLifecycle

/// Renders a thumbnail for each URL it is sent, until graceful shutdown.
struct Thumbnails: Service {
    let fetcher: Fetcher
    let renders: JobQueue
    let urls: AsyncStream<URL>
    let rendered: Protected<[URL]>

    func run() async {
        await cancelWhenGracefulShutdown {
            for await url in urls {
                guard let page = try? await fetcher.body(of: url).value else { continue }
                renders.addJob {
                    _ = page.count  // render the thumbnail
                    rendered.write { $0.append(url) }
                }
            }
        }
    }
}

func runThumbnailService(urls: AsyncStream<URL>, rendered: Protected<[URL]>) async throws {
    let logger = Logger(label: "thumbnails")
    let fetcher = Fetcher(maxConcurrentRequests: 8)
    fetcher.setEventLogger(logger)
    let renders = JobQueue(name: "renders", maxConcurrentJobs: 2)
    let group = ServiceGroup(
        services: [
            FetcherService(fetcher, gracePeriod: .seconds(10)),
            JobQueueService(renders, gracePeriod: .seconds(20), finishingQueuedJobs: true),
            Thumbnails(fetcher: fetcher, renders: renders, urls: urls, rendered: rendered),
        ],
        gracefulShutdownSignals: [.sigterm],
        logger: logger)
    try await group.run()
}

// The code above is the block of Baton.docc/RunningBatonInAService.md, verbatim.

import BatonTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
import UnixSignals
#endif

@Suite("Guide: running Baton in a service", .timeLimit(.minutes(1)))
struct ServiceGuideTests {
    @Test("the thumbnail service renders each URL once and returns on SIGTERM")
    func sigtermEndsTheService() async throws {
        let (urls, sender) = AsyncStream.makeStream(of: URL.self)
        let rendered = Protected<[URL]>([])
        let service = Task { try await runThumbnailService(urls: urls, rendered: rendered) }
        var urlsToSend: [URL] = []
        for page in 0..<20 { urlsToSend.append(try await GuideServer.url("/text/\(uniqueKey("page-\(page)"))")) }
        let sent = urlsToSend
        for url in sent { sender.yield(url) }
        #expect(await eventuallyHolds { rendered.value.count == sent.count })
        // The group traps SIGTERM before it starts its services: a render means it is running.
        kill(getpid(), SIGTERM)
        try await service.value(within: 30)
        let renderedOnce = rendered.value.map(\.absoluteString).sorted()
        #expect(renderedOnce == sent.map(\.absoluteString).sorted())
    }
}
#endif
