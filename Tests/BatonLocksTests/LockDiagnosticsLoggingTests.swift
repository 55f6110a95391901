#if Logging
import BatonTestSupport
import Foundation
import Logging
import Testing

@testable import BatonLocks

// In the serialized diagnostics suite: these tests replace the process's report handler.
extension LockDiagnosticsTests {
    /// The entries about locks whose names start with `prefix`, logged while `body` ran with the
    /// reports going to a capturing logger; the collecting handler is back afterwards.
    private func logged(_ prefix: String, _ body: () throws -> Void) rethrows -> [LogCapture.Entry] {
        let capture = LogCapture()
        LockDiagnostics.setReportLogger(capture.logger)
        defer { _ = DiagnosticsCapture.start("restore") }
        try body()
        return capture.entries.filter { entry in
            ["baton.locks", "baton.lock"].contains { entry[$0]?.contains("\"\(prefix)") == true }
        }
    }

    @Test("An AB/BA inversion is logged once, at error, with both locks and both orders as metadata")
    func inversionIsLogged() throws {
        let prefix = "log-abba-\(UUID().uuidString.prefix(8))"
        let a = Lock(name: "\(prefix)-a")
        let b = Lock(name: "\(prefix)-b")
        let abLine = #line + 3
        let baLine = #line + 3
        let entries = logged(prefix) {
            #expect(startThread { a.withLock { b.withLock {} } }.join())
            #expect(startThread { b.withLock { a.withLock {} } }.join())
            #expect(startThread { b.withLock { a.withLock {} } }.join())
        }
        #expect(entries.count == 1)
        let entry = try #require(entries.first)
        #expect(entry.level == .error)
        #expect(entry.message.hasPrefix("Baton lock-order inversion:"))
        #expect(!entry.message.contains("\n"))
        #expect(entry["baton.report"] == "lock-order-inversion")
        let locks = try #require(entry["baton.locks"])
        #expect(locks.contains("\"\(prefix)-a\"") && locks.contains("\"\(prefix)-b\""))
        #expect(entry["baton.order"]?.contains("\(#fileID):\(baLine)") == true)
        #expect(entry["baton.earlier_orders"]?.contains("\(#fileID):\(abLine)") == true)
    }

    @Test("A nested read lock is logged as a re-entry at warning, with both sites; a deadlocking one, at error")
    func reentryIsLogged() throws {
        let prefix = "log-reread-\(UUID().uuidString.prefix(8))"
        let lock = ReadWriteLock(name: "\(prefix)-rw")
        let line = #line + 1
        let entries = logged(prefix) { #expect(lock.withReadLock { lock.withReadLock { 42 } } == 42) }
        let entry = try #require(entries.first)
        #expect(entries.count == 1)
        #expect(entry.level == .warning)
        #expect(entry["baton.report"] == "reentry")
        #expect(entry["baton.lock"]?.contains("\"\(prefix)-rw\"") == true)
        #expect(entry["baton.taken_at"] == "\(#fileID):\(line)")
        #expect(entry["baton.first_taken_at"] == "\(#fileID):\(line)")
        #expect(entry["baton.deadlocks"] == "false")

        let deadlocking = LockReport.reentry(
            LockReentry(
                lock: LockDescription(kind: .lock, name: "x", createdAt: SourceSite(fileID: "M/F.swift", line: 1)),
                firstTakenAt: nil, takenAgainAt: SourceSite(fileID: "M/F.swift", line: 2), deadlocks: true))
        #expect(deadlocking.logLevel == .error)
        #expect(deadlocking.logMetadata["baton.deadlocks"] == .stringConvertible(true))
        #expect(deadlocking.logMetadata["baton.first_taken_at"] == nil)
    }

    @Test("A long hold is logged at warning, with the hold and the threshold in milliseconds")
    func longHoldIsLogged() throws {
        let prefix = "log-hold-\(UUID().uuidString.prefix(8))"
        let before = LockDiagnostics.holdTimeThreshold
        defer { LockDiagnostics.holdTimeThreshold = before }
        LockDiagnostics.holdTimeThreshold = .milliseconds(5)
        let lock = Lock(name: "\(prefix)-slow")
        let line = #line + 1
        let entries = logged(prefix) { _ = lock.withLock { usleep(50_000) } }
        let entry = try #require(entries.first)
        #expect(entries.count == 1)
        #expect(entry.level == .warning)
        #expect(entry["baton.report"] == "long-hold")
        #expect(entry["baton.taken_at"] == "\(#fileID):\(line)")
        #expect(try #require(Double(entry["baton.held_ms"] ?? "")) >= 50)
        #expect(entry["baton.threshold_ms"] == "5.0")
    }

    @Test("Locks taken in order log nothing")
    func orderedLocksLogNothing() {
        let prefix = "log-ordered-\(UUID().uuidString.prefix(8))"
        let a = Lock(name: "\(prefix)-a")
        let b = Lock(name: "\(prefix)-b")
        let entries = logged(prefix) {
            for _ in 0..<3 { #expect(startThread { a.withLock { b.withLock {} } }.join()) }
        }
        #expect(entries.isEmpty)
    }
}
#endif
