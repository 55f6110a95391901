import BatonLocks
import Foundation
import Testing

// The classes raced here, `Warrior`, `Ledger` and `SynchronizedStatisticsProbe`, are in
// Expanded/, committed as `@Synchronized` expands them (CommittedExpansionTests checks that they
// are): these suites run without the Macros trait too, so under both sanitizers.

/// What a `Ledger` may point to, weakly.
final class Auditor: Sendable {}

/// Runs `body(index)` on `threads` threads of their own, released together once all have
/// started, and returns when all are done.
private func race(_ threads: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let started = DispatchSemaphore(value: 0)
    let go = DispatchSemaphore(value: 0)
    let done = DispatchGroup()
    for index in 0..<threads {
        done.enter()
        Thread {
            started.signal()
            go.wait()
            body(index)
            done.leave()
        }.start()
    }
    for _ in 0..<threads { started.wait() }
    for _ in 0..<threads { go.signal() }
    done.wait()
}

@Suite struct SynchronizedTests {
    @Test func aSynchronizedClassIsSendable() async {
        let warrior = Warrior(name: "Ada")
        // Compiles only because the class is Sendable: the task captures it.
        await Task.detached { warrior.leftHand = "sword" }.value
        #expect(warrior.leftHand == "sword")
        #expect(warrior.name == "Ada")
    }

    @Test func defaultsInitAssignmentsAndImplicitNilKeepWorking() {
        let ledger = Ledger(checking: 100, savings: 5)
        #expect(ledger.count == 0)
        #expect(ledger.entries.isEmpty)
        #expect(ledger.checking == 100)
        #expect(ledger.savings == 5)
        #expect(ledger.note == nil)
        #expect(ledger.total == 105)
        #expect(ledger.opened == 1)
        #expect(Ledger.kind == "ledger")
        ledger.unguarded = 3
        #expect(ledger.unguarded == 3)
        let warrior = Warrior(name: "Bo")
        #expect(warrior.leftHand == nil && warrior.rightHand == nil && warrior.swaps == 0 && warrior.log.isEmpty)
    }

    @Test func aWeakPropertyStaysWeak() {
        let ledger = Ledger(checking: 0, savings: 0)
        var auditor: Auditor? = Auditor()
        ledger.auditor = auditor
        #expect(ledger.auditor === auditor)
        auditor = nil
        #expect(ledger.auditor == nil)
    }

    @Test(.timeLimit(.minutes(1)))
    func compoundAssignmentIsOneAtomicReadModifyWrite() {
        let ledger = Ledger(checking: 0, savings: 0)
        race(4) { _ in
            for _ in 0..<25_000 { ledger.count += 1 }
        }
        #expect(ledger.count == 100_000)
    }

    @Test(.timeLimit(.minutes(1)))
    func appendIsOneAtomicReadModifyWrite() {
        let ledger = Ledger(checking: 0, savings: 0)
        race(4) { thread in
            for index in 0..<5_000 { ledger.entries.append(thread * 5_000 + index) }
        }
        let entries = ledger.entries
        #expect(entries.count == 20_000)
        let lost = Set(0..<20_000).subtracting(entries)
        #expect(lost.isEmpty, "\(lost.count) appends lost")
    }

    @Test(.timeLimit(.minutes(1)))
    func juggledItemsAreNeitherLostNorDroppedTwice() {
        let warrior = Warrior(name: "Cy")
        warrior.leftHand = "left"
        warrior.rightHand = "right"
        let dropped = Collected()
        race(4) { thread in
            for index in 0..<2_000 {
                if index % 10 == 0 { warrior.swapHands() }
                if let item = warrior.juggle("\(thread)-\(index)") { dropped.add(item) }
            }
        }
        // Each juggle drops exactly one item (the hands are never empty), so the dropped items
        // and the two in hand are every item that was ever held, each once.
        let held = [warrior.leftHand, warrior.rightHand].compactMap { $0 }
        let everything = dropped.items + held
        let expected = ["left", "right"] + (0..<4).flatMap { thread in (0..<2_000).map { "\(thread)-\($0)" } }
        #expect(everything.count == expected.count)
        let lost = Set(expected).subtracting(everything)
        #expect(lost.isEmpty, "\(lost.count) items lost")
        #expect(warrior.swaps == 4 * 200)
    }

    @Test(.timeLimit(.minutes(1)))
    func nestedCriticalSectionsAreAtomicAndDoNotDeadlock() {
        let ledger = Ledger(checking: 1_000_000, savings: 0)
        let torn = Collected()
        race(4) { thread in
            for _ in 0..<2_000 {
                if thread < 2 {
                    ledger.transferTwice(1)
                } else {
                    // A reader inside the lock never sees a transfer half done.
                    let total = ledger.withLock { ledger.checking + ledger.savings }
                    if total != 1_000_000 { torn.add("\(total)") }
                }
            }
        }
        #expect(torn.items.isEmpty)
        #expect(ledger.checking == 1_000_000 - 2 * 2_000 * 2)
        #expect(ledger.savings == 2 * 2_000 * 2)
    }

    @Test(.timeLimit(.minutes(1)))
    func aThrowingBodyRethrowsItsTypedErrorAndReleasesTheLock() {
        let ledger = Ledger(checking: 10, savings: 0)
        #expect(throws: Ledger.Overdrawn(shortBy: 5)) { try ledger.withdraw(15) }
        #expect(ledger.checking == 10)
        // Another thread can take the lock: the throw released it.
        let other = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            ledger.checking += 1
            other.signal()
        }
        other.wait()
        #expect(ledger.checking == 11)
        let value: Int = ledger.withLock { 42 }
        #expect(value == 42)
    }

    @Test func theLockIsNamedAfterTheClass() {
        // Other suites switch statistics on and off; retry a few times around their toggles.
        var named: LockStatistics?
        for _ in 0..<5 where named == nil {
            LockDiagnostics.collectsStatistics = true
            let probe = SynchronizedStatisticsProbe()
            for _ in 0..<100 { probe.value += 1 }
            named = LockDiagnostics.statistics().first { $0.name == "SynchronizedStatisticsProbe" }
        }
        #expect(named != nil)
        #expect((named?.acquisitions ?? 0) > 0)
    }
}

/// Strings gathered from several threads.
private final class Collected: Sendable {
    private let storage = Protected<[String]>([])
    func add(_ item: String) { storage.write { $0.append(item) } }
    var items: [String] { storage.value }
}

#if Macros
import BatonMacros

/// Properties whose types are inferred from their initial values, through the macro itself (a
/// committed expansion cannot spell a property with accessors without its type).
@Synchronized
final class Tally {
    var count = 0
    var names = [String]()
    private(set) var last = ""

    /// One section that reads and writes every property.
    func record(_ name: String) {
        withLock {
            count += 1
            names.append(name)
            last = name
        }
    }
}

/// A section to report as held too long, for the site lock diagnostics give it.
@Synchronized
final class SlowSection {
    var entered = 0
    static let sectionLine = #line + 3

    func hold() {
        withLock {
            entered += 1
        }
    }

    /// A multi-line string inside a section: its lines keep their indentation.
    func describe() -> String {
        withLock {
            """
            entered: \(entered)
              and no more
            """
        }
    }

    /// A parameter with the property's name: inside the section, `entered` is the parameter.
    func enter(entered: Int) -> Int {
        withLock {
            self.entered = entered
            return self.entered + entered
        }
    }
}

@Suite struct SynchronizedMethodTests {
    @Test(.timeLimit(.minutes(1)))
    func aSectionIsReportedAtTheLineThatOpensIt() throws {
        let before = LockDiagnostics.holdTimeThreshold
        defer {
            LockDiagnostics.holdTimeThreshold = before
            LockDiagnostics.restoreDefaultReportHandler()
        }
        let holds = Protected<[LongLockHold]>([])
        LockDiagnostics.setReportHandler { report in
            if case .longHold(let hold) = report, hold.lock.name == "SlowSection" { holds.write { $0.append(hold) } }
        }
        // Any section holds the lock longer than a nanosecond: no need to wait to be reported.
        LockDiagnostics.holdTimeThreshold = .nanoseconds(1)
        SlowSection().hold()
        let hold = try #require(holds.value.first)
        #expect(hold.takenAt == SourceSite(fileID: #fileID, line: SlowSection.sectionLine))
    }

    @Test func aMultilineStringInASectionKeepsItsIndentation() {
        #expect(SlowSection().describe() == "entered: 0\n  and no more")
    }

    @Test func aNameTheMethodBindsIsWhatTheMethodBoundInsideASection() {
        let section = SlowSection()
        #expect(section.enter(entered: 7) == 14)
        #expect(section.entered == 7)
    }

    @Test(.timeLimit(.minutes(1)))
    func aSectionThatReachesTheStorageIsOneAtomicStep() {
        let tally = Tally()
        race(4) { thread in
            for index in 0..<2_500 { tally.record("\(thread)-\(index)") }
        }
        #expect(tally.count == 10_000)
        #expect(tally.names.count == 10_000)
        #expect(Set(tally.names).count == 10_000)
    }
}

@Suite struct SynchronizedInferredTypeTests {
    @Test(.timeLimit(.minutes(1)))
    func inferredTypesStartAtTheirDefaultsAndEachUpdateIsAtomic() {
        let tally = Tally()
        #expect(tally.count == 0 && tally.names.isEmpty && tally.last.isEmpty)
        race(4) { thread in
            for index in 0..<2_500 {
                tally.count += 1
                if index % 100 == 0 { tally.names.append("\(thread)-\(index)") }
            }
        }
        #expect(tally.count == 10_000)
        #expect(tally.names.count == 4 * 25)
    }
}
#endif
