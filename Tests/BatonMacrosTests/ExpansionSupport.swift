#if Macros
import BatonMacrosExpansion
import SwiftSyntaxBuilder
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// The macros as the compiler sees them: `@Synchronized` declares a `Sendable` conformance.
let synchronizedMacros: [String: MacroSpec] = [
    "Synchronized": MacroSpec(type: SynchronizedMacro.self, conformances: ["Sendable"]),
    "SynchronizedProperty": MacroSpec(type: SynchronizedPropertyMacro.self),
    "SynchronizedMethod": MacroSpec(type: SynchronizedMethodMacro.self),
]

/// Expands `source` and compares the result, the diagnostics and the fixed source with the
/// expected ones, recording a test issue for each difference.
func assertExpansion(
    _ source: String,
    expandedSource: String,
    diagnostics: [DiagnosticSpec] = [],
    applyFixIts: [String]? = nil,
    fixedSource: String? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    assertMacroExpansion(
        source, expandedSource: expandedSource, diagnostics: diagnostics, macroSpecs: synchronizedMacros,
        applyFixIts: applyFixIts, fixedSource: fixedSource,
        failureHandler: { failure in
            Issue.record(Comment(rawValue: failure.message), sourceLocation: sourceLocation)
        }
    )
}
#endif
