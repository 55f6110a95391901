import BatonLocks
import CachingProxy
import Foundation
import NIOHTTP1
import Testing

/// The proxy's rules, through its HTTP interface, against a real upstream on 127.0.0.1.
@Suite(.timeLimit(.minutes(1)), .serialized) struct ProxyTests {
    @Test func aBodyTheUpstreamLetsItKeepIsServedFromTheCacheAfterTheFirstTime() async throws {
        try await withProxy { upstream, proxy in
            let target = upstream.url("/body/kept?size=100&cc=public,%20max-age=60")
            let first = try await proxy.fetch(target)
            let second = try await proxy.fetch(target)
            #expect(first.status == 200 && second.status == 200)
            #expect(first.headers["X-Cache"] == ["miss"] && second.headers["X-Cache"] == ["hit"])
            #expect(first.body == String(repeating: "b", count: 100) && second.body == first.body)
            #expect(second.headers["Content-Type"] == ["application/octet-stream"])
            #expect(upstream.hits("/body/kept") == 1)
            #expect(proxy.service.proxy.cache.totalCost == 100)
        }
    }

    @Test(arguments: [
        "", "?cc=no-store", "?cc=max-age=60,%20no-store", "?cc=no-cache", "?cc=private,%20max-age=60", "?cc=max-age=0",
    ])
    func aBodyTheUpstreamDoesNotLetItKeepIsFetchedEachTime(query: String) async throws {
        try await withProxy { upstream, proxy in
            for _ in 0..<2 {
                let answer = try await proxy.fetch(upstream.url("/body/unkept" + query))
                #expect(answer.status == 200 && answer.headers["X-Cache"] == ["miss"])
            }
            #expect(upstream.hits("/body/unkept") == 2)
            #expect(proxy.service.proxy.cache.count == 0)
        }
    }

    @Test func badInputIsAnsweredWithTheReason() async throws {
        try await withProxy { upstream, proxy in
            let missing = try await proxy.get("/fetch")
            #expect(missing.status == 400 && missing.body.contains("?url="))
            let empty = try await proxy.get("/fetch?url=")
            #expect(empty.status == 400)
            for target in ["not a url", "/body/relative", "ftp://127.0.0.1:\(upstream.port)/x"] {
                let answer = try await proxy.fetch(target)
                #expect(answer.status == 400, "\(target)")
                #expect(answer.headers["X-Cache"].isEmpty)
            }
            let credentials = try await proxy.fetch("http://user:secret@127.0.0.1:\(upstream.port)/body/secret")
            #expect(credentials.status == 400 && credentials.body.contains("without credentials"))
            #expect(upstream.hits("/body/secret") == 0)
        }
    }

    @Test func onlyAllowedOriginsAreFetchedAndRedirectsStayWithinThem() async throws {
        let other = try await Upstream.start()
        try await withProxy { upstream, proxy in
            // Another port, another host name for the same address, another scheme: refused, never sent.
            for target in [
                other.url("/body/elsewhere"), "http://localhost:\(upstream.port)/body/elsewhere",
                "https://127.0.0.1:\(upstream.port)/body/elsewhere",
            ] {
                let answer = try await proxy.fetch(target)
                #expect(answer.status == 403, "\(target)")
                #expect(answer.body.contains("not an allowed origin"), "\(target)")
            }
            #expect(other.hits("/body/elsewhere") == 0 && upstream.hits("/body/elsewhere") == 0)
            // A redirect within the allowed origins is followed; one outside them is refused.
            let within = try await proxy.fetch(upstream.url("/redirect/within?to=/body/target"))
            #expect(within.status == 200 && within.body == String(repeating: "b", count: 10))
            #expect(upstream.hits("/body/target") == 1)
            let outside = try await proxy.fetch(upstream.url("/redirect/outside?to=\(other.url("/body/elsewhere"))"))
            #expect(outside.status == 403 && outside.body.contains("outside the allowed origins"))
            #expect(other.hits("/body/elsewhere") == 0)
        }
        try await other.stop()
    }

    @Test func anUpstreamThatKeepsFailingIsA502WithTheCauseAndOtherStatusesAreRelayed() async throws {
        try await withProxy { upstream, proxy in
            let failing = try await proxy.fetch(upstream.url("/status/503/down"))
            #expect(failing.status == 502 && failing.body.contains("503") && failing.body.contains("2 attempt"))
            #expect(upstream.hits("/status/503/down") == 2)
            // Relayed as it is, and not kept, whatever its Cache-Control: only a 200 is.
            for _ in 0..<2 {
                let missing = try await proxy.fetch(upstream.url("/status/404/gone?cc=max-age=60"))
                #expect(missing.status == 404 && missing.headers["X-Cache"] == ["miss"] && missing.body == "status 404")
            }
            #expect(upstream.hits("/status/404/gone") == 2)
        }
    }

    @Test func aBodyOverTheLimitIsA502AndNeverCached() async throws {
        try await withProxy({ $0.maxBodyBytes = 1_000 }) { upstream, proxy in
            for _ in 0..<2 {
                let answer = try await proxy.fetch(upstream.url("/body/large?size=5000&cc=max-age=60"))
                #expect(answer.status == 502 && answer.body.contains("over 1000 bytes"))
            }
            #expect(upstream.hits("/body/large") == 2)
            #expect(proxy.service.proxy.cache.count == 0)
            let fits = try await proxy.fetch(upstream.url("/body/fits?size=1000"))
            #expect(fits.status == 200 && fits.body.count == 1_000)
        }
    }

    @Test func requestsBeyondTheBoundAreShedAtOnceAndTheUpstreamSeesNoMoreThanItsBound() async throws {
        try await withProxy({
            $0.maxClientRequests = 3
            $0.maxUpstreamRequests = 2
        }) { upstream, proxy in
            // Three distinct requests held at the upstream: two reach it, the third waits in the fetcher.
            let held = (0..<3).map { index in
                Task { try await proxy.fetch(upstream.url("/held/\(index)")) }
            }
            try await waitUntil("two requests are held at the upstream and three are handled") {
                upstream.serving.now == 2 && proxy.service.proxy.requestsInFlight == 3
            }
            let shed = try await proxy.fetch(upstream.url("/body/shed"))
            #expect(shed.status == 503 && shed.headers["Retry-After"] == ["1"])
            #expect(upstream.hits("/body/shed") == 0)
            for _ in 0..<3 { _ = upstream.gate.signal() }
            for task in held {
                let answer = try await task.value
                #expect(answer.status == 200 && answer.body == "released")
            }
            #expect(upstream.serving.most == 2)
            // Each answered request gave its place back: the next one is handled, not shed.
            #expect(proxy.service.proxy.requestsInFlight == 0)
            let next = try await proxy.fetch(upstream.url("/body/after"))
            #expect(next.status == 200)
        }
    }

    @Test func concurrentRequestsForOneURLAreOneUpstreamRequest() async throws {
        try await withProxy { upstream, proxy in
            let callers = (0..<3).map { _ in
                Task { try await proxy.fetch(upstream.url("/held/shared")) }
            }
            try await waitUntil("three callers wait for the one request held at the upstream") {
                proxy.service.proxy.requestsInFlight == 3 && upstream.serving.now == 1
            }
            _ = upstream.gate.signal()
            for caller in callers {
                let answer = try await caller.value
                #expect(answer.status == 200 && answer.body == "released")
            }
            #expect(upstream.hits("/held/shared") == 1)
        }
    }

    @Test func healthAndMetricsAreServed() async throws {
        try await withProxy { upstream, proxy in
            let health = try await proxy.get("/healthz")
            #expect(health.status == 200 && health.body == "ok\n")
            let target = upstream.url("/body/counted?cc=max-age=60")
            _ = try await proxy.fetch(target)
            _ = try await proxy.fetch(target)
            proxy.service.reporter.report()
            let metrics = try await proxy.get("/metrics")
            #expect(metrics.status == 200)
            #expect(metrics.body.contains(#"proxy_requests_total{status="200",cache="hit"} 1"#), "\(metrics.body)")
            #expect(metrics.body.contains(#"proxy_requests_total{status="200",cache="miss"} 1"#))
            #expect(metrics.body.contains(#"baton_cache_hits_total{cache="proxy"} 1"#))
        }
    }

    @Test func aGracefulShutdownStopsAcceptingAtOnceAndAnswersWhatIsInFlightInFull() async throws {
        let upstream = try await Upstream.start()
        // A drain far longer than the test may take: the service must stop once it has answered
        // what it took, not when the drain is over.
        let proxy = try await RunningProxy.start(configuration(allowing: upstream), drain: .seconds(3_600))
        let inFlight = Task { try await proxy.fetch(upstream.url("/held/drain")) }
        try await waitUntil("the request is held at the upstream") { upstream.serving.now == 1 }
        #expect(await proxy.acceptsConnections())
        let idle = try await proxy.idleConnection()
        #expect(idle.isActive)
        let stopping = proxy.stopInBackground()
        try await waitUntil("the server refuses new connections") { await !proxy.acceptsConnections() }
        // An idle client does not hold the shutdown: the server closes its connection.
        try await waitUntil("the server closes the idle connection") { !idle.isActive }
        // The request it took is served as before the shutdown: its fetch is not cut off.
        #expect(!proxy.service.proxy.fetcher.isShutDown)
        _ = upstream.gate.signal()
        let answered = try await inFlight.value
        #expect(answered.status == 200 && answered.body == "released")
        try await waitUntil("the service stops, without waiting out the drain") { stopping.ended.value }
        try await stopping.task.value
        #expect(proxy.service.proxy.fetcher.isShutDown)
        let requests = proxy.service.proxy.requestsTaken
        #expect(requests.taken == 1 && requests.answered == 1)
        try await upstream.stop()
    }
}

extension ProxyTests {
    @Test func everyAnswerCarriesTheRequestIdItsLogLinesCarry() async throws {
        let upstream = try await Upstream.start()
        let logs = LogLines()
        let proxy = try await RunningProxy.start(configuration(allowing: upstream), logger: logs.logger)
        let failed = try await proxy.fetch(upstream.url("/status/503/logged"))
        let refused = try await proxy.get("/fetch")
        let served = try await proxy.fetch(upstream.url("/body/logged"))
        try await proxy.stop()
        try await upstream.stop()
        let ids = [failed, refused, served].map { $0.headers["X-Request-Id"].first ?? "" }
        #expect(ids.allSatisfy { !$0.isEmpty } && Set(ids).count == 3, "\(ids)")
        #expect(failed.status == 502 && logs.requestIDs(of: "upstream failed") == [ids[0]])
    }

    @Test func aRequestStillInFlightWhenTheDrainEndsIsAnswered503() async throws {
        let upstream = try await Upstream.start()
        let proxy = try await RunningProxy.start(configuration(allowing: upstream), drain: .zero)
        let inFlight = Task { try await proxy.fetch(upstream.url("/held/cut")) }
        try await waitUntil("the request is held at the upstream") { upstream.serving.now == 1 }
        let stopping = proxy.stopInBackground()
        do {
            try await waitUntil("the service stops at the end of the drain") { stopping.ended.value }
        } catch {
            _ = upstream.gate.signal()
            throw error
        }
        try await stopping.task.value
        let answer = try await inFlight.value
        #expect(answer.status == 503 && answer.body.contains("shutting down"))
        _ = upstream.gate.signal()
        try await upstream.stop()
    }
}

/// Waits until `condition` holds, checking every millisecond; fails by name after 30 seconds.
func waitUntil(_ what: String, _ condition: () async -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(30)
    while await !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("timed out waiting until \(what)")
            throw CancellationError()
        }
        try await Task.sleep(for: .milliseconds(1))
    }
}
