import Foundation
import Testing

@testable import BatonBench

@Suite("libCacheSim anchors")
struct LibCacheSimAnchorsTests {
    /// A stand-in for the Python interpreter: a shell script in a fresh directory, run by the
    /// anchors with the script path and the bench's arguments. Removed by the caller.
    func fakeInterpreter(_ body: String) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("baton-fake-python-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("python3")
        try ("#!/bin/sh\n" + body + "\n").write(to: file, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: file.path)
        return file
    }

    let traces = [
        LibCacheSimAnchors.Trace(label: "first", keys: Array(0..<100), capacity: 10),
        LibCacheSimAnchors.Trace(label: "second", keys: Array(0..<200), capacity: 20),
    ]

    /// Reports, for every trace it is given, each policy with the trace file's size in bytes
    /// ÷ 1,000 as the hit ratio (sizes below 1,000), after checking the warm-up argument.
    static let echoingScript = #"""
        [ "$2" = "--warm-up" ] && [ "$3" = "7" ] || exit 9
        shift 3
        printf '{"libcachesim": "test", "results": ['
        separator=''
        for spec in "$@"; do
            path=${spec%:*}
            capacity=${spec##*:}
            size=$(wc -c < "$path" | tr -d ' ')
            for policy in S3-FIFO ARC W-TinyLFU; do
                printf '%s{"trace": "%s", "capacity": %s, "policy": "%s", "hit_ratio": 0.%03d}' \
                    "$separator" "$path" "$capacity" "$policy" "$size"
                separator=', '
            done
        done
        printf ']}\n'
        """#

    @Test("the traces reach the script as 32-bit little-endian keys, and every row comes back under its case")
    func measured() throws {
        let python = try fakeInterpreter(Self.echoingScript)
        defer { try? FileManager.default.removeItem(at: python.deletingLastPathComponent()) }
        let outcome = LibCacheSimAnchors(python: python.path).measure(traces, warmUp: 7)
        guard case .measured(let version, let rows) = outcome else {
            Issue.record("expected rows, got \(outcome)")
            return
        }
        #expect(version == "test")
        #expect(rows.count == 6)
        #expect(Set(rows.map(\.policy)) == Set(LibCacheSimAnchors.policies))
        #expect(rows.filter { $0.label == "first" }.allSatisfy { $0.hitRatio == 0.4 })
        #expect(rows.filter { $0.label == "second" }.allSatisfy { $0.hitRatio == 0.8 })
    }

    @Test("keys are written as little-endian unsigned 32-bit integers")
    func encoding() {
        let data = LibCacheSimAnchors.encode([1, 0x0102_0304, -1])
        #expect(Array(data) == [1, 0, 0, 0, 4, 3, 2, 1, 0xFF, 0xFF, 0xFF, 0xFF])
    }

    @Test("no interpreter: skipped, saying so")
    func missingInterpreter() {
        let outcome = LibCacheSimAnchors(python: "/nonexistent/python3").measure(traces, warmUp: 0)
        #expect(outcome == .skipped(reason: "/nonexistent/python3 not found"))
    }

    @Test("no libcachesim module: skipped, saying how to install it")
    func missingModule() throws {
        let python = try fakeInterpreter("echo 'libcachesim is not importable' >&2; exit 3")
        defer { try? FileManager.default.removeItem(at: python.deletingLastPathComponent()) }
        let outcome = LibCacheSimAnchors(python: python.path).measure(traces, warmUp: 0)
        #expect(outcome == .skipped(reason: "the libcachesim Python module is missing (pip install libcachesim)"))
    }

    @Test("no script: skipped, naming the path looked for")
    func missingScript() {
        let script = URL(fileURLWithPath: "/nonexistent/cache-anchors.py")
        let outcome = LibCacheSimAnchors(python: "python3", script: script).measure(traces, warmUp: 0)
        #expect(outcome == .skipped(reason: "/nonexistent/cache-anchors.py not found"))
    }

    @Test("a failing or garbled script is a skip with its reason, never rows")
    func badOutput() {
        let labels = ["/tmp/a.u32": "a"]
        func outcome(_ status: Int32, _ output: String, _ errors: String = "") -> LibCacheSimAnchors.Outcome {
            LibCacheSimAnchors.outcome(
                status: status, output: Data(output.utf8), errors: errors, python: "python3", labels: labels)
        }
        #expect(outcome(127, "") == .skipped(reason: "python3 not found"))
        #expect(
            outcome(1, "", "Traceback\nValueError: bad trace")
                == .skipped(reason: "the anchor script failed with status 1: ValueError: bad trace"))
        #expect(outcome(0, "not json") == .skipped(reason: "the anchor script printed no report the bench can read"))
        let row = #"{"trace": "/tmp/a.u32", "capacity": 1, "policy": "ARC", "hit_ratio": 0.5}"#
        #expect(
            outcome(0, #"{"libcachesim": "x", "results": [\#(row)]}"#)
                == .skipped(reason: "the anchor script reported 1 hit ratios, not 3"))
        let stranger = #"{"trace": "/tmp/b.u32", "capacity": 1, "policy": "ARC", "hit_ratio": 0.5}"#
        #expect(
            outcome(0, #"{"libcachesim": "x", "results": [\#(stranger)]}"#)
                == .skipped(reason: "the anchor script reported a trace or a ratio the bench did not ask for"))
        let rows = ["S3-FIFO", "ARC", "W-TinyLFU"].map {
            #"{"trace": "/tmp/a.u32", "capacity": 1, "policy": "\#($0)", "hit_ratio": 0.25}"#
        }
        #expect(
            outcome(0, #"{"libcachesim": "0.3.5", "results": [\#(rows.joined(separator: ","))]}"#)
                == .measured(
                    version: "0.3.5",
                    rows: ["S3-FIFO", "ARC", "W-TinyLFU"].map { .init(label: "a", policy: $0, hitRatio: 0.25) }))
    }
}
