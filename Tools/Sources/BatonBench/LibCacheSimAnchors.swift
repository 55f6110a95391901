import Foundation

/// libCacheSim's S3-FIFO, ARC and W-TinyLFU as hit-ratio anchors, measured on the very key
/// streams Baton's caches are measured on: the bench writes each stream to a file and runs
/// `Tools/Scripts/cache-anchors.py` (Python, with the `libcachesim` module from PyPI) on all of them
/// at once. The bench cannot link libCacheSim itself, and it must run where Python is not
/// installed: then the anchors are skipped, and the report says why.
struct LibCacheSimAnchors {
    /// One stream to measure: its keys, the cache's room, and the requests not counted.
    struct Trace {
        let label: String
        let keys: [Int32]
        let capacity: Int
    }

    /// One hit ratio, as the script reports it.
    struct Row: Equatable {
        let label: String
        let policy: String
        let hitRatio: Double
    }

    /// What a run gives: the rows and the libcachesim version, or why there are none.
    enum Outcome: Equatable {
        case measured(version: String, rows: [Row])
        case skipped(reason: String)
    }

    /// The policies the script reports, by the names the bench prints.
    static let policies = ["S3-FIFO", "ARC", "W-TinyLFU"]

    /// The Python interpreter to run the script with: `$BATON_PYTHON`, or `python3` on the path.
    let python: String
    /// The script; by default found next to the sources this bench was built from.
    let script: URL

    init(
        python: String = ProcessInfo.processInfo.environment["BATON_PYTHON"] ?? "python3",
        script: URL = Self.defaultScript
    ) {
        self.python = python
        self.script = script
    }

    /// `Tools/Scripts/cache-anchors.py` in the checkout this file was compiled from.
    static var defaultScript: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Scripts/cache-anchors.py")
    }

    /// Writes each trace to a temporary file, runs the script on all of them and parses what
    /// it prints. Never throws: any failure is a skip with its reason.
    func measure(_ traces: [Trace], warmUp: Int) -> Outcome {
        guard FileManager.default.fileExists(atPath: script.path) else {
            return .skipped(reason: "\(script.path) not found")
        }
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent(
                "baton-cache-traces-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            return .skipped(reason: "could not write the traces (\(error))")
        }
        defer { try? FileManager.default.removeItem(at: directory) }
        var labels: [String: String] = [:]
        var arguments = [script.path, "--warm-up", String(warmUp)]
        for (number, trace) in traces.enumerated() {
            let file = directory.appendingPathComponent("trace-\(number).u32")
            do {
                try Self.encode(trace.keys).write(to: file)
            } catch {
                return .skipped(reason: "could not write the traces (\(error))")
            }
            labels[file.path] = trace.label
            arguments.append("\(file.path):\(trace.capacity)")
        }
        let (status, output, errors): (Int32, Data, String)
        do {
            (status, output, errors) = try run(arguments, in: directory)
        } catch {
            return .skipped(reason: "\(python) could not be started (\(error.localizedDescription))")
        }
        return Self.outcome(status: status, output: output, errors: errors, python: python, labels: labels)
    }

    /// The keys as the script reads them: little-endian unsigned 32-bit integers.
    static func encode(_ keys: [Int32]) -> Data {
        var data = Data(capacity: keys.count * 4)
        for key in keys {
            withUnsafeBytes(of: UInt32(bitPattern: key).littleEndian) { data.append(contentsOf: $0) }
        }
        return data
    }

    /// Interprets the script's exit status and output. `labels` maps each trace path given to
    /// the script back to its case.
    static func outcome(status: Int32, output: Data, errors: String, python: String, labels: [String: String])
        -> Outcome
    {
        let lastError = errors.split(separator: "\n").last.map(String.init) ?? ""
        switch status {
        case 0: break
        // `env` reports a program it cannot find with 127.
        case 127: return .skipped(reason: "\(python) not found")
        case 3: return .skipped(reason: "the libcachesim Python module is missing (pip install libcachesim)")
        default: return .skipped(reason: "the anchor script failed with status \(status): \(lastError)")
        }
        struct Report: Decodable {
            struct Result: Decodable {
                let trace: String
                let capacity: Int
                let policy: String
                let hitRatio: Double

                enum CodingKeys: String, CodingKey {
                    case trace, capacity, policy
                    case hitRatio = "hit_ratio"
                }
            }
            let libcachesim: String
            let results: [Result]
        }
        guard let report = try? JSONDecoder().decode(Report.self, from: output) else {
            return .skipped(reason: "the anchor script printed no report the bench can read")
        }
        var rows: [Row] = []
        for result in report.results {
            guard let label = labels[result.trace], (0...1).contains(result.hitRatio) else {
                return .skipped(reason: "the anchor script reported a trace or a ratio the bench did not ask for")
            }
            rows.append(Row(label: label, policy: result.policy, hitRatio: result.hitRatio))
        }
        let expected = labels.count * policies.count
        guard rows.count == expected else {
            return .skipped(reason: "the anchor script reported \(rows.count) hit ratios, not \(expected)")
        }
        return .measured(version: report.libcachesim, rows: rows)
    }

    /// Runs the interpreter through `env` (so that a bare name is looked up on the path) and
    /// collects its exit status, standard output and standard error (through a file in
    /// `directory`, so that neither stream can fill a pipe while the other is read).
    private func run(_ arguments: [String], in directory: URL) throws -> (Int32, Data, String) {
        let errorFile = directory.appendingPathComponent("stderr.txt")
        guard FileManager.default.createFile(atPath: errorFile.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown)
        }
        let errorHandle = try FileHandle(forWritingTo: errorFile)
        defer { try? errorHandle.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [python] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = errorHandle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let errors = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
        return (process.terminationStatus, outputData, errors)
    }
}
