#if Lifecycle
import BatonFutures
import BatonLocks
import BatonTestSupport
import Clocks
import Dispatch
import Foundation
import ServiceLifecycle
import Testing

@testable import BatonHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `FetcherService` in a real `ServiceGroup`: graceful shutdown while a request runs,
/// cancellation of the group, and the order in which a group stops a fetcher and what sends
/// requests through it.
@Suite(.timeLimit(.minutes(1)), .offTheCooperativePool) struct FetcherServiceTests {
    typealias Shutdown = FetcherShutdownTests

    /// A service that fetches through `fetcher`, one request after another, until graceful
    /// shutdown.
    struct Client: Service {
        let fetcher: Fetcher
        let results: Protected<[URLResult]>

        func run() async {
            await cancelWhenGracefulShutdown {
                var next = 0
                while !Task.isCancelled && next < 100_000 {
                    next += 1
                    let future = fetcher.result(of: Shutdown.request("POST", "/\(next)"))
                    guard let result = try? await future.value else { return }
                    results.write { $0.append(result) }
                }
            }
        }
    }

    @Test func gracefulShutdownAnswersTheRunningRequestThenRunReturns() async throws {
        let (_, fetcher, running, exchange) = await Shutdown.oneRequestOnTheWire()

        let group = ServiceGroup(services: [FetcherService(fetcher, gracePeriod: .seconds(30), clock: TestClock())])
        let returned = Protected(false)
        let run = Task {
            try await group.run()
            returned.write { $0 = true }
        }
        await group.triggerGracefulShutdown()
        #expect(await Shutdown.waitForShutdownToWait(fetcher))
        #expect(fetcher.isShutDown)
        let late = try await fetcher.result(of: Shutdown.url).value(within: patience)
        #expect(Shutdown.shutDownError(late)?.reason == .refused)
        #expect(!returned.value)

        exchange.answer(200, "answered")
        #expect(try await running.value(within: patience).statusCode == 200)
        try await run.value(within: 30)
        #expect(returned.value)
        #expect(!exchange.isCancelled)
    }

    @Test func theGracePeriodRunsOnTheServicesClock() async throws {
        let (_, fetcher, running, exchange) = await Shutdown.oneRequestOnTheWire()
        let clock = TestClock()
        let group = ServiceGroup(services: [FetcherService(fetcher, gracePeriod: .seconds(5), clock: clock)])
        let run = Task { try await group.run() }
        await group.triggerGracefulShutdown()
        #expect(await Shutdown.waitForShutdownToWait(fetcher))
        await clock.advance(by: .seconds(5))
        #expect(Shutdown.shutDownError(try await running.value(within: patience))?.reason == .gracePeriodEnded)
        try await run.value(within: 30)
        #expect(exchange.isCancelled)
    }

    @Test func cancellingTheGroupCutsOffEveryRequestAndStillWaitsForTheTransport() async throws {
        let (_, fetcher, running, exchange) = await Shutdown.oneRequestOnTheWire(holdsCancelled: true)

        let service = Announced(FetcherService(fetcher, gracePeriod: .seconds(3600), clock: TestClock()))
        let group = ServiceGroup(services: [service])
        let returned = Protected(false)
        let run = Task {
            try? await group.run()
            returned.write { $0 = true }
        }
        #expect(service.waitUntilStarted())
        run.cancel()
        #expect(Shutdown.shutDownError(try await running.value(within: patience))?.reason == .gracePeriodEnded)
        #expect(await eventuallyHolds { exchange.isCancelled })
        #expect(!returned.value)
        exchange.fail()
        await run.value(within: 30)
        #expect(fetcher.isShutDown)
    }

    /// A group shuts its services down in reverse order, the last one first: a client listed
    /// after the fetcher has stopped when the fetcher shuts down, so none of its requests is
    /// refused.
    @Test func aFetcherListedBeforeItsClientShutsDownAfterIt() async throws {
        let transport = ManualTransport(answersAtOnce: true)
        let fetcher = Fetcher(transport: transport, retryPolicy: .none)
        let results = Protected<[URLResult]>([])
        let group = ServiceGroup(services: [
            FetcherService(fetcher, gracePeriod: .seconds(30), clock: TestClock()),
            Client(fetcher: fetcher, results: results),
        ])
        let run = Task { try await group.run() }
        #expect(await eventuallyHolds { results.value.count >= 100 })
        await group.triggerGracefulShutdown()
        try await run.value(within: 30)
        #expect(results.value.count >= 100)
        #expect(results.value.allSatisfy { $0.statusCode == 200 }, "a request of the client was refused or cut off")
        #expect(fetcher.isShutDown)
    }

    @Test func theServiceKeepsWhatItWasGiven() {
        let fetcher = Fetcher(transport: ManualTransport())
        let service = FetcherService(fetcher, gracePeriod: .seconds(2))
        #expect(service.description == "FetcherService")
        #expect(service.gracePeriod == .seconds(2))
        #expect(service.fetcher === fetcher)
    }
}
#endif
