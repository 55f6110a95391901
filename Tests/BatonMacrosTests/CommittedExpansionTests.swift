#if Macros
import Foundation
import Testing

/// Classes committed as `@Synchronized` expands them, each below the class as written: the
/// bench's contender (in `Tools/`), so that running the bench needs no release build of
/// swift-syntax, and the classes that `SynchronizedTests` races, so that the sanitizer builds,
/// which leave the Macros trait out, race them too. This test expands each class as its file
/// writes it, with today's macro, and fails if the committed expansion differs: what the bench
/// measures and the suites race is exactly what users of the macro get.
@Suite struct CommittedExpansionTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test(arguments: [
        "Tools/Sources/BatonBench/SynchronizedWarrior.swift",
        "Tests/BatonMacrosTests/Expanded/Warrior.swift",
        "Tests/BatonMacrosTests/Expanded/Ledger.swift",
        "Tests/BatonMacrosTests/Expanded/SynchronizedStatisticsProbe.swift",
    ])
    func theCommittedCodeIsTheMacrosExpansion(of path: String) throws {
        let file = Self.root.appendingPathComponent(path)
        let text = try String(contentsOf: file, encoding: .utf8)
        let lines = text.components(separatedBy: "\n")
        let written = try #require(lines.firstIndex(of: "// The class as written:"), "no source in \(path)")
        let expansion = try #require(lines.firstIndex(of: "// Its expansion:"), "no expansion in \(path)")
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
