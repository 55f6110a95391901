import BatonTestSupport
import Foundation
import Testing

@testable import BatonLocks

// In the serialized diagnostics suite: these tests change process-wide switches too.
extension LockDiagnosticsTests {
    @Test(
        "AB/BA between two AsyncLocks in two tasks is reported once, naming both locks and sites",
        .timeLimit(.minutes(1)))
    func asyncABBAIsReported() async throws {
        let prefix = DiagnosticsCapture.start("async-abba")
        let before = LockDiagnostics.checksLockOrder
        defer { LockDiagnostics.checksLockOrder = before }
        LockDiagnostics.checksLockOrder = true
        let a = AsyncLock(name: "\(prefix)-a")
        let b = AsyncLock(name: "\(prefix)-b")
        let abLine = #line + 1
        try await Task { try await a.withLock { try await b.withLock { await Task.yield() } } }.value
        #expect(DiagnosticsCapture.reports(about: prefix).isEmpty)
        let baLine = #line + 1
        try await Task { try await b.withLock { try await a.withLock { await Task.yield() } } }.value
        try await Task { try await b.withLock { try await a.withLock {} } }.value

        let reports = DiagnosticsCapture.reports(about: prefix)
        #expect(reports.count == 1)
        let inversion = try #require(reports.first?.inversion)
        #expect(inversion.newOrder.first.name == "\(prefix)-b")
        #expect(inversion.newOrder.second.name == "\(prefix)-a")
        #expect(inversion.newOrder.firstTakenAt == SourceSite(fileID: #fileID, line: baLine))
        #expect(inversion.newOrder.secondTakenAt == SourceSite(fileID: #fileID, line: baLine))
        let earlier = try #require(inversion.earlierOrders.first)
        #expect(earlier.first.name == "\(prefix)-a" && earlier.second.name == "\(prefix)-b")
        #expect(earlier.secondTakenAt == SourceSite(fileID: #fileID, line: abLine))
        #expect(inversion.locks.allSatisfy { $0.kind == .asyncLock })
        #expect(inversion.description.contains("AsyncLock \"\(prefix)-a\""))
    }

    @Test(
        "An AsyncLock leaves the order graph when it is deinitialised, so a reused address inherits nothing",
        .timeLimit(.minutes(1)))
    func asyncDeinitLeavesTheGraph() async throws {
        let prefix = DiagnosticsCapture.start("async-deinit")
        let before = LockDiagnostics.checksLockOrder
        defer { LockDiagnostics.checksLockOrder = before }
        LockDiagnostics.checksLockOrder = true
        var outer: AsyncLock? = AsyncLock(name: "\(prefix)-outer")
        var inner: AsyncLock? = AsyncLock(name: "\(prefix)-inner")
        #expect(outer?.name == "\(prefix)-outer" && AsyncLock().name == nil)
        let ids = [ObjectIdentifier(outer!), ObjectIdentifier(inner!)]
        try await Task { [outer, inner] in try await outer!.withLock { try await inner!.withLock {} } }.value
        #expect(ids.allSatisfy(LockOrderGraph.shared.contains))
        outer = nil
        inner = nil
        #expect(!ids.contains(where: LockOrderGraph.shared.contains))
    }

    /// In a process where only AsyncLocks ever used the diagnostics, a lock's deinit must still
    /// know to leave the order graph: the AsyncLock's path marks the diagnostics used, as the
    /// other locks' does. In a process of its own, since any lock of the test run would mark it.
    @Test("An AsyncLock alone marks the diagnostics used, so it leaves the graph in a process of its own")
    func asyncLocksAloneMarkTheDiagnosticsUsed() async {
        await #expect(processExitsWith: .success) {
            LockDiagnostics.checksLockOrder = true
            var outer: AsyncLock? = AsyncLock(name: "outer")
            var inner: AsyncLock? = AsyncLock(name: "inner")
            let ids = [ObjectIdentifier(outer!), ObjectIdentifier(inner!)]
            try? await Task { [outer, inner] in try await outer!.withLock { try await inner!.withLock {} } }.value
            guard ids.allSatisfy(LockOrderGraph.shared.contains) else { exit(2) }
            outer = nil
            inner = nil
            exit(ids.contains(where: LockOrderGraph.shared.contains) ? 1 : 0)
        }
    }

    @Test("AsyncLocks taken in one order by many tasks report nothing", .timeLimit(.minutes(1)))
    func asyncConsistentOrderIsQuiet() async throws {
        let prefix = DiagnosticsCapture.start("async-consistent")
        let before = LockDiagnostics.checksLockOrder
        defer { LockDiagnostics.checksLockOrder = before }
        LockDiagnostics.checksLockOrder = true
        let outer = AsyncLock(name: "\(prefix)-outer")
        let inner = AsyncLock(name: "\(prefix)-inner")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<20 { try await outer.withLock { try await inner.withLock { await Task.yield() } } }
                    try await inner.withLock {}
                }
            }
            try await group.waitForAll()
        }
        #expect(DiagnosticsCapture.reports(about: prefix).isEmpty)
    }

    @Test(
        "AsyncLock statistics count every acquisition, and a waiter that waited as contended",
        .timeLimit(.minutes(1)))
    func asyncStatistics() async throws {
        let prefix = DiagnosticsCapture.start("async-stats")
        let before = LockDiagnostics.collectsStatistics
        defer { LockDiagnostics.collectsStatistics = before }
        LockDiagnostics.collectsStatistics = true
        let name = "\(prefix)-lock"
        let lock = AsyncLock(name: name)
        for _ in 0..<10 { try await lock.withLock {} }
        var stats = try #require(LockDiagnostics.statistics().first { $0.name == name })
        #expect(stats.locks == 1 && stats.acquisitions == 10 && stats.contendedAcquisitions == 0)

        let gate = Gate()
        let holder = Task { try await lock.withLock { await gate.wait() } }
        #expect(await waitUntil { lock.isHeld })
        let waiter = Task { try await lock.withLock {} }
        #expect(await waitUntil { lock.waitingCount == 1 })
        try await Task.sleep(for: .milliseconds(5))
        gate.open()
        try await holder.value
        try await waiter.value
        stats = try #require(LockDiagnostics.statistics().first { $0.name == name })
        #expect(stats.acquisitions == 12 && stats.contendedAcquisitions == 1)
        #expect(stats.totalWait >= .milliseconds(5))
    }

    /// Lock-order checking on, so each acquisition takes the diagnosed path, and statistics off:
    /// a named lock counts nothing, neither the free acquisitions nor the one that waited.
    @Test(
        "With statistics off, an AsyncLock counts nothing, contended or not, while another diagnostic is on",
        .timeLimit(.minutes(1)))
    func asyncStatisticsOff() async throws {
        let prefix = DiagnosticsCapture.start("async-nostats")
        let (statistics, order) = (LockDiagnostics.collectsStatistics, LockDiagnostics.checksLockOrder)
        defer { (LockDiagnostics.collectsStatistics, LockDiagnostics.checksLockOrder) = (statistics, order) }
        LockDiagnostics.collectsStatistics = false
        LockDiagnostics.checksLockOrder = true
        let name = "\(prefix)-lock"
        let lock = AsyncLock(name: name)
        for _ in 0..<10 { try await lock.withLock {} }
        let gate = Gate()
        let holder = Task { try await lock.withLock { await gate.wait() } }
        #expect(await waitUntil { lock.isHeld })
        let waiter = Task { try await lock.withLock {} }
        #expect(await waitUntil { lock.waitingCount == 1 })
        gate.open()
        try await holder.value
        try await waiter.value
        let stats = try #require(LockDiagnostics.statistics().first { $0.name == name })
        #expect(stats.acquisitions == 0 && stats.contendedAcquisitions == 0 && stats.totalWait == .zero)
    }

    /// Every diagnostic off: a wait with a deadline takes the general slow path, which must keep
    /// no lock order then, so AB/BA reports nothing.
    @Test("With every diagnostic off, AsyncLocks taken with a deadline keep no lock order", .timeLimit(.minutes(1)))
    func asyncDeadlineWaitsKeepNoOrderWhenOff() async throws {
        let prefix = DiagnosticsCapture.start("async-off")
        let restore = everyDiagnosticOff()
        defer { restore() }
        let a = AsyncLock(name: "\(prefix)-a")
        let b = AsyncLock(name: "\(prefix)-b")
        // A free lock takes the fast path, which keeps no order anyway: each lock is held by
        // another task when it is asked for, so that both acquisitions wait.
        for (first, second) in [(a, b), (b, a)] {
            let (firstGate, secondGate) = (Gate(), Gate())
            let firstHolder = Task { try await first.withLock { await firstGate.wait() } }
            let secondHolder = Task { try await second.withLock { await secondGate.wait() } }
            #expect(await waitUntil { first.isHeld && second.isHeld })
            let nested = Task {
                let clock = ContinuousClock()
                let deadline = clock.now + .seconds(60)
                try await first.withLock(until: deadline, clock: clock) {
                    try await second.withLock(until: deadline, clock: clock) {}
                }
            }
            #expect(await waitUntil { first.waitingCount == 1 })
            firstGate.open()
            #expect(await waitUntil { second.waitingCount == 1 })
            secondGate.open()
            for task in [firstHolder, secondHolder, nested] { try await task.value }
        }
        #expect(DiagnosticsCapture.reports(about: prefix).isEmpty)
    }

    /// Every diagnostic off (a release build's default): a contended wait takes the slow path
    /// written for that case. Its timer still ends a timed wait, and a waiter handed the lock is
    /// its holder, named as such when it re-enters.
    @Test(
        "With every diagnostic off, a contended AsyncLock wait times out, and a waiter handed the lock is named its holder",
        .timeLimit(.minutes(1)))
    func asyncSlowPathWithDiagnosticsOff() async throws {
        let restore = everyDiagnosticOff()
        defer { restore() }
        let lock = AsyncLock(name: "quiet")
        let gate = Gate()
        let holder = Task { try await lock.withLock { await gate.wait() } }
        #expect(await waitUntil { lock.isHeld })
        let timedOut = await Task { () -> Bool in
            do {
                try await lock.withLock(timeout: .milliseconds(5)) {}
                return false
            } catch {
                return error is TimeoutError
            }
        }.value(within: 30)
        #expect(timedOut == true)
        let outerLine = #line + 3
        let waiter = Task { () -> AsyncLockError? in
            do {
                try await lock.withLock {
                    try await lock.withLock {}
                }
                return nil
            } catch {
                return error as? AsyncLockError
            }
        }
        #expect(await waitUntil { lock.waitingCount == 1 })
        gate.open()
        try await holder.value
        let error = await waiter.value(within: 30)
        #expect(error??.code == .reentry)
        #expect(error??.firstTakenAt == SourceSite(fileID: #fileID, line: outerLine))
    }

    @Test("An AsyncLock held across a long await is reported after it is released", .timeLimit(.minutes(1)))
    func asyncLongHold() async throws {
        let prefix = DiagnosticsCapture.start("async-hold")
        let before = LockDiagnostics.holdTimeThreshold
        defer { LockDiagnostics.holdTimeThreshold = before }
        LockDiagnostics.holdTimeThreshold = .milliseconds(5)
        let lock = AsyncLock(name: "\(prefix)-slow")
        try await lock.withLock {}
        #expect(DiagnosticsCapture.reports(about: prefix).isEmpty)
        let line = #line + 1
        try await lock.withLock { try await Task.sleep(for: .milliseconds(30)) }
        let hold = try #require(DiagnosticsCapture.reports(about: prefix).first?.longHold)
        #expect(hold.lock.kind == .asyncLock && hold.lock.name == "\(prefix)-slow")
        #expect(hold.duration >= .milliseconds(30))
        #expect(hold.takenAt == SourceSite(fileID: #fileID, line: line))
    }

    #if DEBUG
    @Test("Debug: the default handler prints an AB/BA inversion of two AsyncLocks and stops")
    func asyncDefaultHandlerStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            exitSuccessfullyIfStillRunning()
            let a = AsyncLock(name: "inbox")
            let b = AsyncLock(name: "outbox")
            try? await Task { try await a.withLock { try await b.withLock {} } }.value
            try? await Task { try await b.withLock { try await a.withLock {} } }.value
        }
        let text = standardError(of: result)
        #expect(text.contains("lock-order inversion"))
        #expect(text.contains("AsyncLock \"outbox\" then AsyncLock \"inbox\""))
    }
    #endif
}
