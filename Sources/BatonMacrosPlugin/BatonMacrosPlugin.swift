#if Macros
import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plugin that expands `@Synchronized`.
@main
struct BatonMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [SynchronizedMacro.self, SynchronizedPropertyMacro.self]
}
#else
/// Built without the Macros trait: an empty tool, so that swift-syntax is not fetched. No
/// target uses it then, and BatonMacros warns that `@Synchronized` needs the trait.
@main
enum BatonMacrosPlugin {
    static func main() {}
}
#endif
