#if Macros
import BatonMacrosExpansion
import SwiftCompilerPlugin
import SwiftSyntax
import SwiftSyntaxMacros

/// The compiler plugin that expands `@Synchronized`.
@main
struct BatonMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [
        SynchronizedMacro.self, SynchronizedPropertyMacro.self, SynchronizedMethodMacro.self,
    ]
}

// The compiler asks the plugin for the types that `#externalMacro` names, by this module's name:
// these forward each role to the expansion of the same name in BatonMacrosExpansion, which the
// tests expand through.

/// `@Synchronized`: see `BatonMacrosExpansion.SynchronizedMacro`.
public enum SynchronizedMacro: MemberMacro, MemberAttributeMacro, ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        try BatonMacrosExpansion.SynchronizedMacro.expansion(
            of: node, providingMembersOf: declaration, conformingTo: protocols, in: context)
    }

    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingAttributesFor member: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AttributeSyntax] {
        try BatonMacrosExpansion.SynchronizedMacro.expansion(
            of: node, attachedTo: declaration, providingAttributesFor: member, in: context)
    }

    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        try BatonMacrosExpansion.SynchronizedMacro.expansion(
            of: node, attachedTo: declaration, providingExtensionsOf: type, conformingTo: protocols, in: context)
    }
}

/// `@SynchronizedProperty`: see `BatonMacrosExpansion.SynchronizedPropertyMacro`.
public enum SynchronizedPropertyMacro: AccessorMacro, PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        try BatonMacrosExpansion.SynchronizedPropertyMacro.expansion(
            of: node, providingAccessorsOf: declaration, in: context)
    }

    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        try BatonMacrosExpansion.SynchronizedPropertyMacro.expansion(
            of: node, providingPeersOf: declaration, in: context)
    }
}
/// `@SynchronizedMethod`: see `BatonMacrosExpansion.SynchronizedMethodMacro`.
public enum SynchronizedMethodMacro: BodyMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingBodyFor declaration: some DeclSyntaxProtocol & WithOptionalCodeBlockSyntax,
        in context: some MacroExpansionContext
    ) throws -> [CodeBlockItemSyntax] {
        try BatonMacrosExpansion.SynchronizedMethodMacro.expansion(
            of: node, providingBodyFor: declaration, in: context)
    }
}
#else
/// Built without the Macros trait: an empty tool, so that swift-syntax is not fetched. No
/// target uses it then, and BatonMacros warns that `@Synchronized` needs the trait.
@main
enum BatonMacrosPlugin {
    static func main() {}
}
#endif
