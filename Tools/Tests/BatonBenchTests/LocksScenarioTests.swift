import Atomics
import Foundation
import Testing

@testable import BatonBench

#if canImport(FoundationXML)
import FoundationXML
#endif

/// The locks scenario at a tiny size: every (case, contender) pair is measured, and the table,
/// JSON and chart built from it are well formed. Nothing here judges speed.
@Suite struct LocksScenarioTests {
    // Thread Sanitizer cannot see Synchronization.Mutex's synchronisation and reports the
    // accesses it guards as races, so the suite (which CI also runs under TSan) leaves that
    // anchor out; `baton bench --quick` in CI runs it.
    static let report = LocksScenario(excluding: ["Synchronization.Mutex"])
        .run(BenchOptions(quick: true, reps: 2, scale: 0.001), progress: .silent)

    @Test func everyCaseHasEveryContender() {
        let report = Self.report
        let expectedCases = [
            "3w/10r", "1w/10r", "1w/10r long reads", "5w/5r", "10w/1r", "uncontended read", "uncontended write",
        ]
        #expect(report.cases == expectedCases)
        #expect(report.contenders.contains("ReadWriteLock"))
        #expect(report.contenders.contains("GCD concurrent+barrier"))
        #expect(report.results.count == expectedCases.count * report.contenders.count)
        for result in report.results {
            #expect(result.reps == 2)
            #expect(result.unit == "ns/op")
            #expect(result.median > 0 && result.median.isFinite)
            #expect(result.worst >= result.median)
        }
        let baton = Set(report.results.filter(\.baton).map(\.contender))
        #expect(baton == ["Lock", "ReadWriteLock", "Protected"])
    }

    /// A mix whose threads cannot finish is stopped at the cap (it would hang the run without
    /// it), and one that finishes first is never told to stop.
    @Test(.timeLimit(.minutes(1))) func aRaceThatCannotFinishIsStoppedAtTheCap() {
        let stop = ManagedAtomic(false)
        let sawStop = ManagedAtomic(0)
        let endless: [@Sendable () -> Void] = (0..<3).map { _ in
            {
                while !stop.load(ordering: .relaxed) { usleep(100) }
                sawStop.wrappingIncrement(ordering: .relaxed)
            }
        }
        _ = raceThreads(endless, cap: .milliseconds(50), stop: stop)
        let stopped = stop.load(ordering: .relaxed)
        let sawIt = sawStop.load(ordering: .relaxed)
        #expect(stopped)
        #expect(sawIt == 3)

        let quickStop = ManagedAtomic(false)
        let finished = ManagedAtomic(0)
        let quick: [@Sendable () -> Void] = (0..<3).map { _ in { finished.wrappingIncrement(ordering: .relaxed) } }
        _ = raceThreads(quick, cap: .seconds(30), stop: quickStop)
        let finishedCount = finished.load(ordering: .relaxed)
        let toldToStop = quickStop.load(ordering: .relaxed)
        #expect(finishedCount == 3)
        #expect(!toldToStop)
    }

    /// A long read sums consecutive keys under the read lock, wrapping at the table's end, the
    /// same way through every contender.
    @Test func longReadsSumConsecutiveKeys() {
        let initial = Dictionary(uniqueKeysWithValues: (0..<dictionarySize).map { ($0, $0) })
        let dictionaries: [any SharedDictionary] = [
            NSLockDictionary(initial), PthreadRWLockDictionary(initial), BarrierQueueDictionary(initial),
            BatonReadWriteLockDictionary(initial), BatonProtectedDictionary(initial),
        ]
        for dictionary in dictionaries {
            #expect(dictionary.readSpan(from: 10, 4) == 10 + 11 + 12 + 13, "\(type(of: dictionary))")
            #expect(dictionary.readSpan(from: 1022, 4) == 1022 + 1023 + 0 + 1, "\(type(of: dictionary))")
            #expect(dictionary.read(7) == 7)
        }
    }

    @Test func tableListsEveryContenderAndRatio() {
        let table = ReportTable(Self.report).render()
        let lines = table.split(separator: "\n")
        for contender in Self.report.contenders {
            #expect(lines.contains { $0.contains(contender) }, "no row for \(contender)")
        }
        #expect(table.contains("ReadWriteLock vs best anchor"))
        #expect(table.contains("ReadWriteLock vs pthread_rwlock"))
        #expect(table.contains("\(Self.report.cores) cores"))
        // Every measurement row has one cell per case, aligned to the header's width.
        let header = lines.first { $0.hasPrefix("ns/op") }!
        let rows = lines.filter { $0.hasPrefix("  NSLock") || $0.hasPrefix("* Lock ") }
        #expect(rows.count == 2)
        for row in rows { #expect(row.count == header.count) }
    }

    @Test func jsonRoundTripsInTheDocumentedShape() throws {
        let line = try Self.report.jsonLine()
        #expect(!line.contains("\n"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["scenario"] as? String == "locks")
        #expect(object["quick"] as? Bool == true)
        #expect(object["cores"] as? Int == activeCores)
        let rows = try #require(object["results"] as? [[String: Any]])
        let first = try #require(rows.first)
        #expect(Set(first.keys).isSuperset(of: ["case", "contender", "baton", "unit", "median", "worst", "reps"]))
        let decoded = try JSONDecoder().decode(ScenarioReport.self, from: Data(line.utf8))
        #expect(decoded.results == Self.report.results)
    }

    @Test func chartIsWellFormedSVGWithABarPerMeasurement() throws {
        let svg = BarChart(Self.report).render()
        let document = try XMLDocument(xmlString: svg)
        let root = try #require(document.rootElement())
        #expect(root.name == "svg")
        let bars = try root.nodes(forXPath: "//*[local-name()='rect'][*[local-name()='title']]")
        #expect(bars.count == Self.report.results.count)
        #expect(svg.contains("log scale"))
    }
}
