#if Macros
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// What `@Synchronized` attaches to each method whose `withLock` sections use the class's
/// synchronized properties: the same body, in which those uses, inside the sections, read and
/// write the properties' storage directly. The section already holds the lock exclusively, so
/// going through the property's accessors would only take it again; direct, a composed
/// operation costs what it costs on a `Protected` value, one lock and plain loads and stores.
///
/// Its arguments name the properties to reach directly. The rewrite is conservative; a use it
/// leaves alone still goes through the accessors, correct and a little slower:
/// - a section is the trailing closure (or the closure argument) of a call of the instance's
///   own `withLock`, written `withLock` or `self.withLock`, with no capture list;
/// - inside a section, `name` and `self.name` are rewritten; a member of anything else
///   (`other.name`), a key path, and a name with argument labels are not;
/// - nothing inside a closure that is not a section, nor inside a local function or accessor,
///   is rewritten: such code may run later, without the lock;
/// - a property whose name the method binds anywhere (a parameter, a local, a closure
///   parameter or capture, a pattern, a local function, `error` in a bare `catch`) is not
///   rewritten anywhere in that method; nor is any section if the method binds `withLock`.
///
/// Each rewritten `withLock` call gets its site as arguments, so that lock diagnostics still
/// name the line where the section starts.
public enum SynchronizedMethodMacro {
    /// The attribute's name, as `@Synchronized` writes it.
    static let name = "SynchronizedMethod"

    /// The names among `properties` that the method's sections use and that the rewrite can
    /// reach directly, in order of first use; empty when there is nothing to rewrite.
    static func directlyReached(in function: FunctionDeclSyntax, among properties: [String]) -> [String] {
        guard let body = function.body else { return [] }
        let rewriter = StorageAccessRewriter(reaching: properties, in: function, locations: nil)
        _ = rewriter.rewrite(body)
        return rewriter.reached
    }

    /// Whether `function` is a method whose body the attribute may rewrite: one with a body,
    /// not inlinable (its body may not name private storage). A static method needs no check:
    /// it has no instance whose `withLock` it could call.
    static func isRewritable(_ function: FunctionDeclSyntax) -> Bool {
        let inlinable = ["inlinable", "_alwaysEmitIntoClient", "_transparent"]
        return function.body != nil && !SynchronizedMacro.hasAttribute(function.attributes, namedAmong: inlinable)
    }

    /// The property names an attribute lists, as string literals.
    static func properties(of attribute: AttributeSyntax) -> [String] {
        guard case .argumentList(let arguments) = attribute.arguments else { return [] }
        return arguments.compactMap { argument in
            guard let literal = argument.expression.as(StringLiteralExprSyntax.self),
                literal.segments.count == 1,
                case .stringSegment(let segment) = literal.segments.first
            else { return nil }
            return segment.content.text
        }
    }
}

extension SynchronizedMethodMacro: BodyMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingBodyFor declaration: some DeclSyntaxProtocol & WithOptionalCodeBlockSyntax,
        in context: some MacroExpansionContext
    ) throws -> [CodeBlockItemSyntax] {
        guard let body = declaration.body else { return [] }
        guard let function = declaration.as(FunctionDeclSyntax.self) else { return Array(body.statements) }
        let rewriter = StorageAccessRewriter(reaching: properties(of: node), in: function, locations: context)
        let rewritten = rewriter.rewrite(body.statements).cast(CodeBlockItemListSyntax.self)
        // As written, the statements are indented for their place in the class; the expansion
        // is a body of its own, indented where it is put.
        let indentation = body.statements.first?.leadingTrivia.pieces.reversed()
            .prefix { !$0.isNewline }
            .reduce(0) { width, piece in
                if case .spaces(let count) = piece { return width + count }
                return width
            }
        let dedented = Dedent(by: indentation ?? 0).rewrite(rewritten).cast(CodeBlockItemListSyntax.self)
        return Array(dedented)
    }
}

/// Takes `width` spaces off the start of every line.
private final class Dedent: SyntaxRewriter {
    private let width: Int

    init(by width: Int) {
        self.width = width
        super.init(viewMode: .sourceAccurate)
    }

    override func visit(_ token: TokenSyntax) -> TokenSyntax {
        token.with(\.leadingTrivia, dedented(token.leadingTrivia))
            .with(\.trailingTrivia, dedented(token.trailingTrivia))
    }

    private func dedented(_ trivia: Trivia) -> Trivia {
        var pieces: [TriviaPiece] = []
        var atLineStart = false
        for piece in trivia.pieces {
            if atLineStart, case .spaces(let count) = piece {
                if count > width { pieces.append(.spaces(count - width)) }
            } else {
                pieces.append(piece)
            }
            atLineStart = piece.isNewline
        }
        return Trivia(pieces: pieces)
    }
}

/// Rewrites the uses of synchronized properties inside a method's `withLock` sections into uses
/// of their storage: see ``SynchronizedMethodMacro``.
final class StorageAccessRewriter: SyntaxRewriter {
    /// The properties that may be reached directly: those named, less those the method binds.
    private let properties: Set<String>
    /// Whether `withLock` means the instance's method throughout the function.
    private let withLockIsTheInstances: Bool
    /// Where the sections' sites come from; `nil` to leave the calls as they are.
    private let locations: (any MacroExpansionContext)?
    /// The closures that are sections, recorded as their calls are reached.
    private var sections: Set<SyntaxIdentifier> = []
    /// Whether the innermost closure or function around the node being visited is a section.
    private var inSection = false
    /// The names rewritten, in order of first use.
    private(set) var reached: [String] = []

    init(reaching properties: [String], in function: FunctionDeclSyntax, locations: (any MacroExpansionContext)?) {
        let bound = BoundNames(in: function).names
        self.properties = Set(properties).subtracting(bound)
        withLockIsTheInstances = !bound.contains("withLock")
        self.locations = locations
        super.init(viewMode: .sourceAccurate)
    }

    /// The closure that runs as a section in `call`, if `call` is `withLock` or `self.withLock`.
    private func section(of call: FunctionCallExprSyntax) -> ClosureExprSyntax? {
        guard withLockIsTheInstances, Self.callsInstanceWithLock(call.calledExpression) else { return nil }
        let closure =
            call.trailingClosure
            ?? call.arguments.last.flatMap { $0.label == nil ? $0.expression.as(ClosureExprSyntax.self) : nil }
        guard let closure, closure.signature?.capture == nil else { return nil }
        return closure
    }

    private static func callsInstanceWithLock(_ callee: ExprSyntax) -> Bool {
        if let reference = callee.as(DeclReferenceExprSyntax.self) {
            return reference.baseName.text == "withLock" && reference.argumentNames == nil
        }
        if let member = callee.as(MemberAccessExprSyntax.self), let base = member.base {
            return isSelf(base) && member.declName.baseName.text == "withLock" && member.declName.argumentNames == nil
        }
        return false
    }

    private static func isSelf(_ expression: ExprSyntax) -> Bool {
        expression.as(DeclReferenceExprSyntax.self)?.baseName.tokenKind == .keyword(.self)
    }

    override func visit(_ node: FunctionCallExprSyntax) -> ExprSyntax {
        guard let closure = section(of: node) else { return super.visit(node) }
        sections.insert(closure.id)
        let hasSite = node.arguments.contains { ["file", "line"].contains($0.label?.text) }
        guard let locations, !hasSite,
            let site = locations.location(of: node, at: .afterLeadingTrivia, filePathMode: .fileID)
        else { return super.visit(node) }
        // The site the call passes by default, where it was written: the expansion is elsewhere.
        let rewritten = super.visit(node).cast(FunctionCallExprSyntax.self)
        var arguments = [
            LabeledExprSyntax(label: "file", expression: site.file)
                .with(\.trailingComma, .commaToken(trailingTrivia: .space)),
            LabeledExprSyntax(label: "line", expression: site.line),
        ]
        if !rewritten.arguments.isEmpty {
            arguments[1].trailingComma = .commaToken(trailingTrivia: .space)
            arguments += rewritten.arguments
        }
        return ExprSyntax(
            rewritten
                .with(\.calledExpression, rewritten.calledExpression.with(\.trailingTrivia, []))
                .with(\.leftParen, .leftParenToken())
                .with(\.arguments, LabeledExprListSyntax(arguments))
                .with(\.rightParen, .rightParenToken(trailingTrivia: rewritten.trailingClosure == nil ? [] : .space))
        )
    }

    override func visit(_ node: ClosureExprSyntax) -> ExprSyntax {
        let outer = inSection
        inSection = sections.contains(node.id)
        defer { inSection = outer }
        return super.visit(node)
    }

    // Local functions, accessors and types may run later, without the lock.

    override func visit(_ node: FunctionDeclSyntax) -> DeclSyntax {
        let outer = inSection
        inSection = false
        defer { inSection = outer }
        return super.visit(node)
    }

    override func visit(_ node: AccessorBlockSyntax) -> AccessorBlockSyntax {
        let outer = inSection
        inSection = false
        defer { inSection = outer }
        return super.visit(node)
    }

    override func visit(_ node: MemberAccessExprSyntax) -> ExprSyntax {
        guard let base = node.base else { return ExprSyntax(node) }
        if inSection, Self.isSelf(base), let storage = storage(for: node.declName) {
            return ExprSyntax(node.with(\.declName, storage))
        }
        // The member's name is not a name of this scope: only the base is visited.
        return ExprSyntax(node.with(\.base, visit(base)))
    }

    override func visit(_ node: KeyPathExprSyntax) -> ExprSyntax {
        ExprSyntax(node)
    }

    override func visit(_ node: DeclReferenceExprSyntax) -> ExprSyntax {
        guard inSection, let storage = storage(for: node) else { return ExprSyntax(node) }
        return ExprSyntax(storage)
    }

    /// The reference to the storage of the property `reference` names, if it is one to reach.
    private func storage(for reference: DeclReferenceExprSyntax) -> DeclReferenceExprSyntax? {
        guard reference.argumentNames == nil, case .identifier(let name) = reference.baseName.tokenKind,
            properties.contains(name)
        else { return nil }
        if !reached.contains(name) { reached.append(name) }
        return reference.with(\.baseName, reference.baseName.with(\.tokenKind, .identifier("_" + name)))
    }
}

/// Every name a function binds, anywhere in it: parameters, locals, closure parameters and
/// captures, patterns, local functions and types, and the `error` of a bare `catch`.
private final class BoundNames: SyntaxVisitor {
    private(set) var names: Set<String> = []

    init(in function: FunctionDeclSyntax) {
        super.init(viewMode: .sourceAccurate)
        for parameter in function.signature.parameterClause.parameters {
            names.insert((parameter.secondName ?? parameter.firstName).text)
        }
        if let body = function.body { walk(body) }
    }

    override func visit(_ node: IdentifierPatternSyntax) -> SyntaxVisitorContinueKind {
        names.insert(node.identifier.text)
        return .visitChildren
    }

    override func visit(_ node: FunctionParameterSyntax) -> SyntaxVisitorContinueKind {
        names.insert((node.secondName ?? node.firstName).text)
        return .visitChildren
    }

    override func visit(_ node: ClosureParameterSyntax) -> SyntaxVisitorContinueKind {
        names.insert((node.secondName ?? node.firstName).text)
        return .visitChildren
    }

    override func visit(_ node: ClosureShorthandParameterSyntax) -> SyntaxVisitorContinueKind {
        names.insert(node.name.text)
        return .visitChildren
    }

    override func visit(_ node: ClosureCaptureSyntax) -> SyntaxVisitorContinueKind {
        names.insert(node.name.text)
        return .visitChildren
    }

    override func visit(_ node: FunctionDeclSyntax) -> SyntaxVisitorContinueKind {
        names.insert(node.name.text)
        return .visitChildren
    }

    override func visit(_ node: CatchClauseSyntax) -> SyntaxVisitorContinueKind {
        if node.catchItems.isEmpty { names.insert("error") }
        return .visitChildren
    }
}
#endif
