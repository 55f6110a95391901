#if Macros
import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@Synchronized` on a final class: a `RecursiveReadWriteLock` per instance, named after the class;
/// ``SynchronizedPropertyMacro`` on every stored `var`; `withLock(_:)`; and a `Sendable`
/// conformance that the compiler checks.
///
/// The member role is the one that diagnoses: the others expand to nothing where it reports.
public enum SynchronizedMacro {
    /// The name of the instance's lock in the expanded class.
    static let lockName = "_batonLock"

    /// The class, if `@Synchronized` can apply to `declaration`; otherwise `nil`, after
    /// reporting why through `context` when one is given.
    static func synchronizableClass(
        _ declaration: some DeclGroupSyntax, attribute: AttributeSyntax,
        reportingIn context: (any MacroExpansionContext)?
    ) -> ClassDeclSyntax? {
        guard let classDecl = declaration.as(ClassDeclSyntax.self) else {
            let message: SynchronizedDiagnostic
            var fixIts: [FixIt] = []
            if declaration.is(StructDeclSyntax.self) {
                message = .onStruct
            } else if declaration.is(EnumDeclSyntax.self) {
                message = .onEnum
            } else if declaration.is(ActorDeclSyntax.self) {
                message = .onActor
                fixIts = [
                    FixIt(
                        message: SynchronizedFixIt.removeAttribute,
                        changes: [.replace(oldNode: Syntax(attribute), newNode: Syntax(AttributeListSyntax([])))]
                    )
                ]
            } else {
                message = .onOther
            }
            context?.diagnose(Diagnostic(node: attribute, message: message, fixIts: fixIts))
            return nil
        }
        guard classDecl.modifiers.contains(where: { $0.name.tokenKind == .keyword(.final) }) else {
            let keyword = classDecl.classKeyword
            let finalClass = TokenSyntax(
                .identifier("final class"), leadingTrivia: keyword.leadingTrivia,
                trailingTrivia: keyword.trailingTrivia,
                presence: .present
            )
            let fixIt = FixIt(
                message: SynchronizedFixIt.addFinal,
                changes: [.replace(oldNode: Syntax(keyword), newNode: Syntax(finalClass))]
            )
            context?.diagnose(
                Diagnostic(node: classDecl.classKeyword, message: SynchronizedDiagnostic.notFinal, fixIts: [fixIt]))
            return nil
        }
        return classDecl
    }

    /// The stored properties that the lock cannot protect, with why.
    static func unsupportedProperties(of classDecl: ClassDeclSyntax) -> [(SynchronizedDiagnostic, any SyntaxProtocol)] {
        variables(in: classDecl.memberBlock.members).compactMap { variable in
            guard case .unsupported(let message, let node) = StoredProperty(variable) else { return nil }
            return (message, node)
        }
    }

    /// The `var` and `let` declarations among `members`, those inside `#if` clauses included.
    static func variables(in members: MemberBlockItemListSyntax) -> [VariableDeclSyntax] {
        members.flatMap { member -> [VariableDeclSyntax] in
            if let variable = member.decl.as(VariableDeclSyntax.self) { return [variable] }
            guard let conditional = member.decl.as(IfConfigDeclSyntax.self) else { return [] }
            return conditional.clauses.flatMap { clause -> [VariableDeclSyntax] in
                guard case .decls(let nested) = clause.elements else { return [] }
                return variables(in: nested)
            }
        }
    }

    /// Whether `attributes` hold an attribute spelled as one of `names`.
    static func hasAttribute(_ attributes: AttributeListSyntax, namedAmong names: [String]) -> Bool {
        attributes.contains { element in
            guard case .attribute(let attribute) = element else { return false }
            return names.contains(attribute.attributeName.trimmedDescription)
        }
    }

    /// The access level that `withLock` shares with the class: `public` and `package` are kept;
    /// anything narrower needs no modifier.
    static func accessModifier(of classDecl: ClassDeclSyntax) -> String {
        for modifier in classDecl.modifiers {
            switch modifier.name.tokenKind {
            case .keyword(.public), .keyword(.open): return "public "
            case .keyword(.package): return "package "
            default: continue
            }
        }
        return ""
    }
}

extension SynchronizedMacro: MemberMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let classDecl = synchronizableClass(declaration, attribute: node, reportingIn: context) else { return [] }
        let unsupported = unsupportedProperties(of: classDecl)
        for (message, node) in unsupported {
            context.diagnose(Diagnostic(node: node, message: message))
        }
        if !unsupported.isEmpty { return [] }
        let className = classDecl.name.trimmedDescription
        let access = accessModifier(of: classDecl)
        return [
            """
            private let \(raw: lockName) = BatonLocks.RecursiveReadWriteLock(name: \(literal: className))
            """,
            """
            /// Runs `body` while holding this instance's lock, and returns what it returns: what
            /// `body` reads and writes of the instance's properties is one atomic step. `body` may
            /// use the properties and call methods that take the lock again.
            \(raw: access)func withLock<Result, Failure: Error>(
                file: StaticString = #fileID, line: UInt = #line,
                _ body: () throws(Failure) -> Result
            ) throws(Failure) -> Result {
                try \(raw: lockName).withLock(file: file, line: line, body)
            }
            """,
        ]
    }
}

extension SynchronizedMacro: MemberAttributeMacro {
    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingAttributesFor member: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AttributeSyntax] {
        guard let classDecl = synchronizableClass(declaration, attribute: node, reportingIn: nil),
            unsupportedProperties(of: classDecl).isEmpty
        else { return [] }
        if let function = member.as(FunctionDeclSyntax.self) {
            return methodAttributes(for: function, in: classDecl)
        }
        guard let variable = member.as(VariableDeclSyntax.self),
            case .synchronized = StoredProperty(variable),
            !hasAttribute(variable.attributes, namedAmong: [SynchronizedPropertyMacro.name])
        else { return [] }
        return ["@\(raw: SynchronizedPropertyMacro.name)"]
    }

    /// `@SynchronizedMethod` with the properties that `function`'s `withLock` sections can reach
    /// directly; nothing when there are none.
    static func methodAttributes(for function: FunctionDeclSyntax, in classDecl: ClassDeclSyntax) -> [AttributeSyntax] {
        guard SynchronizedMethodMacro.isRewritable(function),
            !hasAttribute(function.attributes, namedAmong: [SynchronizedMethodMacro.name])
        else { return [] }
        let properties = variables(in: classDecl.memberBlock.members).compactMap { variable -> String? in
            guard case .synchronized(let name, _) = StoredProperty(variable) else { return nil }
            return name.text
        }
        let reached = SynchronizedMethodMacro.directlyReached(in: function, among: properties)
        if reached.isEmpty { return [] }
        let names = reached.map { "\"\($0)\"" }.joined(separator: ", ")
        return ["@\(raw: SynchronizedMethodMacro.name)(\(raw: names))"]
    }
}

extension SynchronizedMacro: ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard !protocols.isEmpty,
            let classDecl = synchronizableClass(declaration, attribute: node, reportingIn: nil),
            unsupportedProperties(of: classDecl).isEmpty
        else { return [] }
        // The compiler checks this conformance: every stored property left alone must be a
        // Sendable `let`, and each synchronized one proves its type Sendable in its init accessor.
        return [try ExtensionDeclSyntax("extension \(type.trimmed): Sendable {}")]
    }
}
#endif
