#if Macros
import Foundation
import Testing

/// The bench (in `Tools/`) measures `@Synchronized` through its expansion, committed as source so
/// that running the bench needs no release build of swift-syntax. This test expands the class as
/// the file writes it, with today's macro, and fails if the committed expansion differs: the
/// bench measures exactly what users of the macro get.
@Suite struct SynchronizedBenchExpansionTests {
    static let file = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Tools/Sources/BatonBench/SynchronizedWarrior.swift")

    @Test func theBenchMeasuresTheMacrosExpansion() throws {
        let text = try String(contentsOf: Self.file, encoding: .utf8)
        let lines = text.components(separatedBy: "\n")
        let written = try #require(lines.firstIndex(of: "// The class as written:"), "no source in \(Self.file.path)")
        let expansion = try #require(lines.firstIndex(of: "// Its expansion:"), "no expansion in \(Self.file.path)")
        let source = lines[(written + 2)..<(expansion - 1)]
            .map { $0 == "//" ? "" : String($0.dropFirst(3)) }
            .joined(separator: "\n")
        let committed = lines[(expansion + 1)...]
            .drop { $0.hasPrefix("import ") || $0.isEmpty }
            .joined(separator: "\n")
            .trimmingCharacters(in: .newlines)
        assertExpansion(source, expandedSource: committed)
    }
}
#endif
