import BatonTestSupport
import Foundation
import Testing

@testable import BatonLocks

// These tests change process-wide switches, so they run one at a time; other suites may run
// beside them, which is why every check looks only at reports about its own locks. The order
// check is on for them in release builds too (it is on by default in debug builds only).
@Suite("Lock diagnostics", .serialized, .lockOrderCheckOn)
struct LockDiagnosticsTests {
    /// Turns every lock diagnostic off, a release build's default (each lock then takes its
    /// path written for that case), and returns what puts the switches back as they were.
    func everyDiagnosticOff() -> @Sendable () -> Void {
        let (order, statistics, threshold) = (
            LockDiagnostics.checksLockOrder, LockDiagnostics.collectsStatistics, LockDiagnostics.holdTimeThreshold
        )
        LockDiagnostics.checksLockOrder = false
        LockDiagnostics.collectsStatistics = false
        LockDiagnostics.holdTimeThreshold = nil
        return {
            LockDiagnostics.checksLockOrder = order
            LockDiagnostics.collectsStatistics = statistics
            LockDiagnostics.holdTimeThreshold = threshold
        }
    }

    /// Runs `body` on a thread of its own and waits for it, so that two orders are seen on two
    /// different threads, one after the other: never at the same time, so never a deadlock.
    private func onThread(_ body: @escaping @Sendable () -> Void) -> Bool {
        startThread(body).join()
    }

    #if DEBUG
    @Test("The lock-order check is on by default in a debug build")
    func onByDefaultInDebug() {
        #expect(LockDiagnostics.checksLockOrder)
    }
    #endif

    @Test("AB/BA on two threads is reported once, naming both locks, both orders and all four call sites")
    func abbaIsReported() throws {
        let prefix = DiagnosticsCapture.start("abba")
        let a = Lock(name: "\(prefix)-a")
        let b = Lock(name: "\(prefix)-b")
        let abLine = #line + 1
        #expect(onThread { a.withLock { b.withLock {} } })
        #expect(DiagnosticsCapture.reports(about: prefix).isEmpty)

        let baLine = #line + 1
        #expect(onThread { b.withLock { a.withLock {} } })
        // Seen again, the same cycle is not reported twice.
        #expect(onThread { b.withLock { a.withLock {} } })

        let reports = DiagnosticsCapture.reports(about: prefix)
        #expect(reports.count == 1)
        let inversion = try #require(reports.first?.inversion)
        #expect(inversion.newOrder.first.name == "\(prefix)-b")
        #expect(inversion.newOrder.second.name == "\(prefix)-a")
        #expect(inversion.newOrder.firstTakenAt == SourceSite(fileID: #fileID, line: baLine))
        #expect(inversion.newOrder.secondTakenAt == SourceSite(fileID: #fileID, line: baLine))
        #expect(inversion.earlierOrders.count == 1)
        let earlier = try #require(inversion.earlierOrders.first)
        #expect(earlier.first.name == "\(prefix)-a")
        #expect(earlier.second.name == "\(prefix)-b")
        #expect(earlier.firstTakenAt == SourceSite(fileID: #fileID, line: abLine))
        #expect(Set(inversion.locks.compactMap(\.name)) == ["\(prefix)-a", "\(prefix)-b"])
        #expect(inversion.locks.allSatisfy { $0.kind == .lock && $0.createdAt.fileID == #fileID })
        let text = inversion.description
        #expect(text.contains("lock-order inversion"))
        #expect(text.contains("\"\(prefix)-a\"") && text.contains("\"\(prefix)-b\""))
        #expect(text.contains("\(#fileID):\(abLine)") && text.contains("\(#fileID):\(baLine)"))
        #expect(text.contains("\n  earlier order:\n") && !text.contains("a chain"))
    }

    @Test("A cycle through three locks of three kinds is reported with the chain that closes it")
    func threeLockCycle() throws {
        let prefix = DiagnosticsCapture.start("cycle3")
        let a = Lock(name: "\(prefix)-a")
        let b = ReadWriteLock(name: "\(prefix)-b")
        let c = RecursiveLock(name: "\(prefix)-c")
        #expect(onThread { a.withLock { b.withReadLock {} } })
        #expect(onThread { b.withWriteLock { c.withLock {} } })
        #expect(DiagnosticsCapture.reports(about: prefix).isEmpty)
        #expect(onThread { c.withLock { a.withLock {} } })

        let reports = DiagnosticsCapture.reports(about: prefix)
        #expect(reports.count == 1)
        let inversion = try #require(reports.first?.inversion)
        #expect(inversion.newOrder.first.name == "\(prefix)-c")
        #expect(inversion.newOrder.second.name == "\(prefix)-a")
        #expect(
            inversion.earlierOrders.map { [$0.first.name, $0.second.name] } == [
                ["\(prefix)-a", "\(prefix)-b"], ["\(prefix)-b", "\(prefix)-c"],
            ])
        #expect(inversion.locks.map(\.kind) == [.lock, .readWriteLock, .recursiveLock])
        #expect(inversion.description.contains("\n  earlier orders (a chain):\n"))
    }

    @Test("A recursive reader-writer lock's exclusive side is checked, taken by withLock and by lock()")
    func recursiveReadWriteLockExclusiveSideIsChecked() {
        let prefix = DiagnosticsCapture.start("rrw")
        let plain = Lock(name: "\(prefix)-plain")
        let recursive = RecursiveReadWriteLock(name: "\(prefix)-recursive")
        #expect(onThread { plain.withLock { recursive.withLock {} } })
        #expect(
            onThread {
                recursive.lock()
                plain.withLock {}
                recursive.unlock()
            })
        #expect(DiagnosticsCapture.reports(about: prefix).compactMap(\.inversion).count == 1)
    }

    @Test("Protected values taken in opposite orders are reported too")
    func protectedInversion() {
        let prefix = DiagnosticsCapture.start("protected")
        let left = Protected(0, name: "\(prefix)-left")
        let right = Protected(0, name: "\(prefix)-right")
        #expect(onThread { left.write { l in right.read { l += $0 } } })
        #expect(onThread { right.write { r in left.read { r += $0 } } })
        #expect(DiagnosticsCapture.reports(about: prefix).compactMap(\.inversion).count == 1)
    }

    @Test("Taking locks in one consistent order on many threads reports nothing")
    func consistentOrderIsQuiet() {
        let prefix = DiagnosticsCapture.start("consistent")
        let outer = Lock(name: "\(prefix)-outer")
        let middle = ReadWriteLock(name: "\(prefix)-middle")
        let inner = RecursiveLock(name: "\(prefix)-inner")
        let total = Guarded(0)  // guarded by `inner`
        #expect(
            raceThreads(4) { _ in
                for round in 0..<1_000 {
                    outer.withLock {
                        if round.isMultiple(of: 2) {
                            middle.withReadLock { inner.withLock { inner.withLock { total.value += 1 } } }
                        } else {
                            inner.withLock { total.value += 1 }  // skips the middle: still the same order
                        }
                    }
                }
            })
        #expect(inner.withLock { total.value } == 4_000)
        #expect(DiagnosticsCapture.reports(about: prefix).isEmpty)
    }

    @Test("A lock leaves the order graph when it is deinitialised, so a reused address inherits nothing")
    func deinitLeavesTheGraph() {
        let prefix = DiagnosticsCapture.start("deinit")
        var outer: Lock? = Lock(name: "\(prefix)-outer")
        var inner: ReadWriteLock? = ReadWriteLock(name: "\(prefix)-inner")
        var recursive: RecursiveLock? = RecursiveLock(name: "\(prefix)-recursive")
        var recursiveRW: RecursiveReadWriteLock? = RecursiveReadWriteLock(name: "\(prefix)-recursive-rw")
        let ids = ([outer!, inner!, recursive!, recursiveRW!] as [AnyObject]).map(ObjectIdentifier.init)
        outer!.withLock { inner!.withWriteLock { recursive!.withLock { recursiveRW!.withReadLock {} } } }
        #expect(ids.allSatisfy(LockOrderGraph.shared.contains))
        outer = nil
        inner = nil
        recursive = nil
        recursiveRW = nil
        for (id, kind) in zip(ids, ["Lock", "ReadWriteLock", "RecursiveLock", "RecursiveReadWriteLock"]) {
            #expect(!LockOrderGraph.shared.contains(id), "a \(kind) left in the graph")
        }
    }

    /// A lock at a reused address is a new lock: the orders of the one that was there before,
    /// into and out of it, are gone. The lock that leaves is taken out as its deinit does it,
    /// while the object stays, so that the new lock has its address for certain.
    @Test("A new lock at a departed lock's address meets none of its orders")
    func aReusedAddressInheritsNoOrder() {
        let prefix = DiagnosticsCapture.start("reused")
        let kept = Lock(name: "\(prefix)-kept")
        let reused = Lock(name: "\(prefix)-reused")
        let other = Lock(name: "\(prefix)-other")
        #expect(onThread { kept.withLock { reused.withLock {} } })
        #expect(onThread { reused.withLock { other.withLock {} } })
        LockOrderGraph.shared.remove(ObjectIdentifier(reused))
        // The reverse orders, through the new lock, close no cycle.
        #expect(onThread { reused.withLock { kept.withLock {} } })
        #expect(onThread { other.withLock { reused.withLock {} } })
        #expect(DiagnosticsCapture.reports(about: prefix).isEmpty)
    }

    @Test("An inversion reported through a departed lock is reported again through the new lock at its address")
    func anInversionThroughAReusedAddressIsReportedAgain() {
        let prefix = DiagnosticsCapture.start("reusedcycle")
        let kept = Lock(name: "\(prefix)-kept")
        let reused = Lock(name: "\(prefix)-reused")
        #expect(onThread { kept.withLock { reused.withLock {} } })
        #expect(onThread { reused.withLock { kept.withLock {} } })
        #expect(DiagnosticsCapture.reports(about: prefix).compactMap(\.inversion).count == 1)
        LockOrderGraph.shared.remove(ObjectIdentifier(reused))
        #expect(onThread { kept.withLock { reused.withLock {} } })
        #expect(onThread { reused.withLock { kept.withLock {} } })
        #expect(DiagnosticsCapture.reports(about: prefix).compactMap(\.inversion).count == 2)
    }

    /// The graph forgets only what involved the departed lock: an inversion of two other locks,
    /// reported before, is not reported again when it happens again.
    @Test("A lock that departs takes only its own reported inversions with it")
    func aDepartureKeepsOtherReportedInversions() {
        let prefix = DiagnosticsCapture.start("departkeeps")
        let a = Lock(name: "\(prefix)-a")
        let b = Lock(name: "\(prefix)-b")
        let departing = Lock(name: "\(prefix)-departing")
        #expect(onThread { a.withLock { b.withLock {} } })
        #expect(onThread { b.withLock { a.withLock {} } })
        #expect(onThread { a.withLock { departing.withLock {} } })
        #expect(onThread { departing.withLock { a.withLock {} } })
        #expect(DiagnosticsCapture.reports(about: prefix).compactMap(\.inversion).count == 2)
        LockOrderGraph.shared.remove(ObjectIdentifier(departing))
        #expect(onThread { b.withLock { a.withLock {} } })
        #expect(onThread { a.withLock { b.withLock {} } })
        #expect(DiagnosticsCapture.reports(about: prefix).compactMap(\.inversion).count == 2)
    }

    /// A thread remembers the orders it has recorded, so that it records each once; when a lock
    /// departs, it must forget them, or the order it meets again through the new lock at that
    /// address is never recorded.
    @Test("A thread that met an order before a lock departed records it again through the new lock at its address")
    func aThreadForgetsTheOrdersItKnewWhenALockDeparts() {
        let prefix = DiagnosticsCapture.start("reusedsamethread")
        let kept = Lock(name: "\(prefix)-kept")
        let reused = Lock(name: "\(prefix)-reused")
        #expect(
            onThread {
                kept.withLock { reused.withLock {} }
                LockOrderGraph.shared.remove(ObjectIdentifier(reused))
                kept.withLock { reused.withLock {} }  // the same thread, the same order: recorded again
            })
        #expect(onThread { reused.withLock { kept.withLock {} } })
        #expect(DiagnosticsCapture.reports(about: prefix).compactMap(\.inversion).count == 1)
    }

    /// A lock released while the check is off leaves no trace in the thread's list of held locks;
    /// so every switch makes each thread forget the locks it held, on its next lock operation.
    @Test("A thread forgets the locks it held when a switch turns: a lock released unseen is not taken for held")
    func aSwitchMakesEachThreadForgetItsHeldLocks() {
        let prefix = DiagnosticsCapture.start("switchforgets")
        let released = Lock(name: "\(prefix)-released")
        let a = Lock(name: "\(prefix)-a")
        let b = Lock(name: "\(prefix)-b")
        #expect(
            onThread {
                released.withLock { LockDiagnostics.checksLockOrder = false }  // released unseen
                LockDiagnostics.checksLockOrder = true
                // The same thread, after two switches: it holds nothing, then a, then b.
                a.withLock { b.withLock {} }
            })
        // Had the thread kept `released` as held, it would have recorded released → a and
        // released → b, and these two would be inversions.
        #expect(onThread { a.withLock { released.withLock {} } })
        #expect(onThread { b.withLock { released.withLock {} } })
        #expect(DiagnosticsCapture.reports(about: prefix).isEmpty)
        // What it took after the switches it recorded: a → b.
        #expect(onThread { b.withLock { a.withLock {} } })
        #expect(DiagnosticsCapture.reports(about: prefix).compactMap(\.inversion).count == 1)
    }

    @Test("Statistics and the hold-time check are off by default; each switch reads back what was set")
    func switchesReadBack() async {
        await #expect(processExitsWith: .success) {
            // A fresh process: nothing has set them.
            if LockDiagnostics.collectsStatistics || LockDiagnostics.holdTimeThreshold != nil { exit(EXIT_FAILURE) }
        }
        let restore = everyDiagnosticOff()
        defer { restore() }
        #expect(!LockDiagnostics.collectsStatistics && !LockDiagnostics.checksLockOrder)
        LockDiagnostics.collectsStatistics = true
        #expect(LockDiagnostics.collectsStatistics && !LockDiagnostics.checksLockOrder)
        LockDiagnostics.checksLockOrder = true
        #expect(LockDiagnostics.collectsStatistics && LockDiagnostics.checksLockOrder)
        LockDiagnostics.collectsStatistics = false
        #expect(!LockDiagnostics.collectsStatistics && LockDiagnostics.checksLockOrder)
        LockDiagnostics.holdTimeThreshold = .nanoseconds(1)
        #expect(LockDiagnostics.holdTimeThreshold == .nanoseconds(1))
    }

    @Test("A hold-time threshold of zero or less is a precondition failure")
    func thresholdMustBePositive() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            LockDiagnostics.holdTimeThreshold = .zero
        }
        #if DEBUG
        #expect(standardError(of: result).contains("the hold-time threshold must be positive"))
        #else
        _ = result
        #endif
        await #expect(processExitsWith: .failure) {
            LockDiagnostics.holdTimeThreshold = .milliseconds(-1)
        }
    }

    @Test("A try-lock never blocks, so it records no order; locks taken under it still do")
    func tryLocksRecordNoOrder() {
        let prefix = DiagnosticsCapture.start("try")
        let a = Lock(name: "\(prefix)-a")
        let b = Lock(name: "\(prefix)-b")
        let c = Lock(name: "\(prefix)-c")
        #expect(onThread { a.withLock { _ = b.tryWithLock {} } })
        #expect(onThread { b.withLock { a.withLock {} } })
        #expect(DiagnosticsCapture.reports(about: prefix).isEmpty)

        #expect(onThread { _ = b.tryWithLock { c.withLock {} } })
        #expect(onThread { c.withLock { b.withLock {} } })
        #expect(DiagnosticsCapture.reports(about: prefix).compactMap(\.inversion).count == 1)

        // A reader-writer lock tried on either side is held all the same.
        let rw = ReadWriteLock(name: "\(prefix)-rw")
        let d = Lock(name: "\(prefix)-d")
        let e = Lock(name: "\(prefix)-e")
        #expect(onThread { _ = rw.tryWithWriteLock { d.withLock {} } })
        #expect(onThread { d.withLock { rw.withWriteLock {} } })
        #expect(onThread { _ = rw.tryWithReadLock { e.withLock {} } })
        #expect(onThread { e.withLock { rw.withReadLock {} } })
        #expect(DiagnosticsCapture.reports(about: prefix).compactMap(\.inversion).count == 3)
    }

    @Test("A timed try gives up instead of deadlocking, so it records no order; locks taken under it still do")
    func timedTriesRecordNoOrder() {
        let prefix = DiagnosticsCapture.start("timed")
        let a = Lock(name: "\(prefix)-a")
        let b = Lock(name: "\(prefix)-b")
        let c = Lock(name: "\(prefix)-c")
        #expect(onThread { a.withLock { _ = b.tryWithLock(timeout: .seconds(60)) {} } })
        #expect(onThread { b.withLock { a.withLock {} } })
        #expect(DiagnosticsCapture.reports(about: prefix).isEmpty)

        #expect(onThread { _ = b.tryWithLock(timeout: .seconds(60)) { c.withLock {} } })
        #expect(onThread { c.withLock { b.withLock {} } })
        #expect(DiagnosticsCapture.reports(about: prefix).compactMap(\.inversion).count == 1)
    }

    @Test("With the check off, an inversion goes unreported; switched back on, it is caught")
    func switchableAtRunTime() {
        let prefix = DiagnosticsCapture.start("switch")
        let before = LockDiagnostics.checksLockOrder
        defer { LockDiagnostics.checksLockOrder = before }
        let a = Lock(name: "\(prefix)-a")
        let b = Lock(name: "\(prefix)-b")

        LockDiagnostics.checksLockOrder = false
        #expect(!LockDiagnostics.checksLockOrder)
        #expect(onThread { a.withLock { b.withLock {} } })
        #expect(onThread { b.withLock { a.withLock {} } })
        #expect(DiagnosticsCapture.reports(about: prefix).isEmpty)

        LockDiagnostics.checksLockOrder = true
        #expect(onThread { a.withLock { b.withLock {} } })
        #expect(onThread { b.withLock { a.withLock {} } })
        #expect(DiagnosticsCapture.reports(about: prefix).compactMap(\.inversion).count == 1)
    }

    @Test("A read lock taken again by its reader is reported as a re-entry that can deadlock")
    func nestedReadIsReported() throws {
        let prefix = DiagnosticsCapture.start("reread")
        let lock = ReadWriteLock(name: "\(prefix)-rw")
        let firstLine = #line + 1
        let value = lock.withReadLock { lock.withReadLock { 42 } }
        #expect(value == 42)
        let reentry = try #require(DiagnosticsCapture.reports(about: prefix).first?.reentry)
        #expect(!reentry.deadlocks)
        #expect(reentry.firstTakenAt == SourceSite(fileID: #fileID, line: firstLine))
        #expect(reentry.takenAgainAt == SourceSite(fileID: #fileID, line: firstLine))
        #expect(reentry.description.contains("re-locked on the thread that already holds it"))
    }

    @Test("A RecursiveLock re-entered by its owner is not a re-entry to report")
    func recursiveReentryIsFine() {
        let prefix = DiagnosticsCapture.start("recursive")
        let lock = RecursiveLock(name: "\(prefix)-r")
        #expect(lock.withLock { lock.withLock { lock.withLock { 3 } } } == 3)
        #expect(DiagnosticsCapture.reports(about: prefix).isEmpty)
    }

    @Test("A critical section longer than the threshold is reported after the lock is released")
    func longHoldIsReported() throws {
        let prefix = DiagnosticsCapture.start("hold")
        let before = LockDiagnostics.holdTimeThreshold
        defer { LockDiagnostics.holdTimeThreshold = before }
        LockDiagnostics.holdTimeThreshold = .milliseconds(5)
        #expect(LockDiagnostics.holdTimeThreshold == .milliseconds(5))

        let lock = Lock(name: "\(prefix)-slow")
        let heldWhenReported = Locked<Bool?>(nil)
        LockDiagnostics.setReportHandler { diagnostic in
            guard diagnostic.locks.contains(where: { $0.name == "\(prefix)-slow" }) else {
                return LockDiagnostics.defaultReportHandler(diagnostic)
            }
            // The report comes after the release: another thread can take the lock at once.
            heldWhenReported.set(runOnAnotherThread { lock.tryWithLock { true } } != true)
        }
        defer { _ = DiagnosticsCapture.start("restore") }

        _ = lock.withLock { usleep(50_000) }
        #expect(heldWhenReported.get() == false)

        _ = DiagnosticsCapture.start("hold")
        let line = #line + 1
        _ = lock.withLock { usleep(50_000) }
        let hold = try #require(DiagnosticsCapture.reports(about: prefix).first?.longHold)
        #expect(hold.duration >= .milliseconds(50))
        #expect(hold.threshold == .milliseconds(5))
        #expect(hold.takenAt == SourceSite(fileID: #fileID, line: line))
        #expect(hold.description.contains("\"\(prefix)-slow\""))
    }

    @Test("Statistics count every acquisition of the locks sharing a name, and the contended ones")
    func statisticsCount() throws {
        let prefix = DiagnosticsCapture.start("stats")
        let before = LockDiagnostics.collectsStatistics
        defer { LockDiagnostics.collectsStatistics = before }
        LockDiagnostics.collectsStatistics = true
        let name = "\(prefix)-shared"
        let first = Lock(name: name)
        let second = ReadWriteLock(name: name)
        let unnamed = Lock()

        let counter = Guarded(0)  // guarded by `first`
        #expect(
            raceThreads(4) { _ in
                for _ in 0..<2_500 {
                    first.withLock { counter.value += 1 }
                    second.withReadLock {}
                    unnamed.withLock {}
                }
            })
        var stats = try #require(LockDiagnostics.statistics().first { $0.name == name })
        #expect(stats.locks == 2)
        #expect(stats.acquisitions == 20_000)
        #expect(stats.contendedAcquisitions <= stats.acquisitions)

        // A waiter that provably parks behind a holder is counted as contended, with its wait.
        let contendedBefore = stats.contendedAcquisitions
        let holder = LockHolder { first.withLock($0) }
        #expect(holder.waitUntilHeld())
        let waiterID = Locked<String?>(nil)
        let waiter = startThread {
            waiterID.set(currentKernelThreadID())
            first.withLock {}
        }
        #expect(eventually { waiterID.get() != nil } && waitUntilParked(waiterID.get()))
        #expect(holder.releaseAndJoin())
        #expect(waiter.join())
        stats = try #require(LockDiagnostics.statistics().first { $0.name == name })
        #expect(stats.acquisitions == 20_002)
        #expect(stats.contendedAcquisitions >= contendedBefore + 1)
        #expect(stats.totalWait > .zero)
        #expect(stats.contentionRatio == Double(stats.contendedAcquisitions) / 20_002)
        #expect(stats.contentionRatio > 0)

        LockDiagnostics.resetStatistics()
        stats = try #require(LockDiagnostics.statistics().first { $0.name == name })
        #expect(stats.acquisitions == 0 && stats.contendedAcquisitions == 0 && stats.totalWait == .zero)
        #expect(stats.locks == 2)
        #expect(stats.contentionRatio == 0)
    }

    @Test("Statistics count a timed acquisition as tryWithLock's and withLock's are; a timeout counts nowhere")
    func timedStatisticsCount() throws {
        let prefix = DiagnosticsCapture.start("timedstats")
        let before = LockDiagnostics.collectsStatistics
        defer { LockDiagnostics.collectsStatistics = before }
        LockDiagnostics.collectsStatistics = true
        let name = "\(prefix)-timed"
        let lock = Lock(name: name)

        // Free: one uncontended acquisition.
        #expect(lock.tryWithLock(timeout: .seconds(60)) { true } == true)
        var stats = try #require(LockDiagnostics.statistics().first { $0.name == name })
        #expect(stats.acquisitions == 1 && stats.contendedAcquisitions == 0)

        // Held past the timeout: no acquisition.
        let holder = LockHolder { lock.withLock($0) }
        #expect(holder.waitUntilHeld())
        #expect(runOnAnotherThread { lock.tryWithLock(timeout: .milliseconds(5)) { true } } == .some(nil))
        stats = try #require(LockDiagnostics.statistics().first { $0.name == name })
        #expect(stats.acquisitions == 2)  // the holder's
        #expect(stats.contendedAcquisitions == 0)

        // A waiter that parks and is woken in time: a contended acquisition, with its wait.
        let waiterID = Locked<String?>(nil)
        let waiter = startThread {
            waiterID.set(currentKernelThreadID())
            _ = lock.tryWithLock(timeout: .seconds(600)) {}
        }
        #expect(eventually { waiterID.get() != nil } && waitUntilParked(waiterID.get()))
        #expect(holder.releaseAndJoin())
        #expect(waiter.join())
        stats = try #require(LockDiagnostics.statistics().first { $0.name == name })
        #expect(stats.acquisitions == 3)
        #expect(stats.contendedAcquisitions == 1)
        #expect(stats.totalWait > .zero)
    }

    @Test("contentionRatio is the contended share of acquisitions, 0 with none, and the description shows it")
    func contentionRatio() {
        let some = LockStatistics(
            name: "ratio", locks: 1, acquisitions: 8, contendedAcquisitions: 3, totalWait: .milliseconds(2))
        #expect(some.contentionRatio == 0.375)
        #expect(some.description.contains("37.5% contended"))
        let none = LockStatistics(name: "idle", locks: 1, acquisitions: 0, contendedAcquisitions: 0, totalWait: .zero)
        #expect(none.contentionRatio == 0)
        let all = LockStatistics(
            name: "all", locks: 2, acquisitions: 5, contendedAcquisitions: 5, totalWait: .seconds(1))
        #expect(all.contentionRatio == 1)
    }

    @Test("A lock made while statistics were off is listed, with what it gathered once they were on")
    func statisticsTurnedOnAfterTheLockWasMade() throws {
        let prefix = DiagnosticsCapture.start("laterstats")
        let before = LockDiagnostics.collectsStatistics
        defer { LockDiagnostics.collectsStatistics = before }
        LockDiagnostics.collectsStatistics = false
        let lock = Lock(name: "\(prefix)-later")
        for _ in 0..<100 { lock.withLock {} }
        LockDiagnostics.collectsStatistics = true
        for _ in 0..<7 { lock.withLock {} }
        let stats = try #require(LockDiagnostics.statistics().first { $0.name == "\(prefix)-later" })
        #expect(stats.locks == 1)
        #expect(stats.acquisitions == 7)
    }

    @Test("Statistics are listed sorted by name")
    func statisticsAreSortedByName() {
        let prefix = DiagnosticsCapture.start("sortedstats")
        let before = LockDiagnostics.collectsStatistics
        defer { LockDiagnostics.collectsStatistics = before }
        LockDiagnostics.collectsStatistics = true
        // Twenty names made in a scrambled order (a, h, o, b, i, …): 7 steps through 20 letters.
        let names = (0..<20).map { index in "\(prefix)-" + String(UnicodeScalar(UInt8(97 + index * 7 % 20))) }
        let locks = names.map { Lock(name: $0) }
        for lock in locks { lock.withLock {} }
        let listed = LockDiagnostics.statistics().map(\.name)
        #expect(listed == listed.sorted())
        #expect(listed.filter { $0.hasPrefix("\(prefix)-") } == names.sorted())
    }

    /// Every diagnostic off (a release build's default): the reader-writer locks go straight to
    /// the platform lock, a path of its own. Writers still exclude each other and the readers,
    /// and a try still fails on a held lock and takes a free one.
    @Test("With every diagnostic off, the reader-writer locks still exclude, and their tries still work")
    func readerWriterLocksWithDiagnosticsOff() {
        let restore = everyDiagnosticOff()
        defer { restore() }
        let plain = ReadWriteLock()
        let recursive = RecursiveReadWriteLock()
        let (plainTotal, recursiveTotal) = (Guarded(0), Guarded(0))  // guarded by `plain`, `recursive`
        let finished = raceThreads(4, timeout: .seconds(30)) { _ in
            for _ in 0..<5_000 {
                plain.withWriteLock { plainTotal.value += 1 }
                recursive.withLock { recursiveTotal.value += 1 }
                _ = plain.withReadLock { plainTotal.value }
            }
        }
        // A lock that left threads stuck may block whoever takes it next: stop here, by name.
        guard finished else { return }
        #expect(plain.withReadLock { plainTotal.value } == 20_000)
        #expect(recursive.withReadLock { recursiveTotal.value } == 20_000)
        let tries = Guarded<[Bool]>([])  // written by one thread at a time, read after it ends
        plain.withWriteLock {
            #expect(onThread { tries.value += [plain.tryWithReadLock {} != nil, plain.tryWithWriteLock {} != nil] })
        }
        plain.withReadLock {
            #expect(onThread { tries.value += [plain.tryWithReadLock {} != nil, plain.tryWithWriteLock {} != nil] })
        }
        #expect(tries.value == [false, false, true, false])
        #expect(plain.tryWithWriteLock { 1 } == 1)
        #expect(plain.tryWithReadLock { 2 } == 2)
    }

    @Test("With statistics off, nothing is counted")
    func statisticsOff() throws {
        let prefix = DiagnosticsCapture.start("nostats")
        let before = LockDiagnostics.collectsStatistics
        defer { LockDiagnostics.collectsStatistics = before }
        LockDiagnostics.collectsStatistics = false
        let order = LockDiagnostics.checksLockOrder
        defer { LockDiagnostics.checksLockOrder = order }
        LockDiagnostics.checksLockOrder = true  // so that tries take the diagnosed path
        let lock = Lock(name: "\(prefix)-quiet")
        for _ in 0..<100 { lock.withLock {} }
        for _ in 0..<10 { #expect(lock.tryWithLock {} != nil) }
        let stats = try #require(LockDiagnostics.statistics().first { $0.name == "\(prefix)-quiet" })
        #expect(stats.acquisitions == 0)
    }

    #if DEBUG
    @Test("Debug: the default handler prints an AB/BA inversion and stops, before any deadlock")
    func defaultHandlerStopsOnInversion() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            exitSuccessfullyIfStillRunning()
            let a = Lock(name: "accounts")
            let b = Lock(name: "ledger")
            _ = startThread { a.withLock { b.withLock {} } }.join()
            _ = startThread { b.withLock { a.withLock {} } }.join()
        }
        let text = standardError(of: result)
        #expect(text.contains("lock-order inversion"))
        #expect(text.contains("Lock \"ledger\" then Lock \"accounts\""))
        #expect(text.contains("Lock \"accounts\" then Lock \"ledger\""))
    }

    @Test("Debug: a Lock re-locked by its holder is reported with both call sites, then stops")
    func reentryReportNamesBothSites() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            exitSuccessfullyIfStillRunning()
            let lock = Lock(name: "registry")
            lock.withLock { lock.withLock {} }
        }
        let text = standardError(of: result)
        #expect(text.contains("Lock \"registry\""))
        #expect(text.contains("re-locked on the thread that already holds it (taken at BatonLocksTests/"))
    }

    @Test("Debug: a write lock taken under its own read lock (an upgrade) is reported and stops")
    func upgradeStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            exitSuccessfullyIfStillRunning()
            let lock = ReadWriteLock(name: "settings")
            lock.withReadLock { lock.withWriteLock {} }
        }
        let text = standardError(of: result)
        #expect(text.contains("ReadWriteLock \"settings\""))
        #expect(text.contains("cannot be upgraded from read to write"))
    }
    #endif
}
