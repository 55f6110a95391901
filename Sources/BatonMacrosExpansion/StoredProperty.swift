#if Macros
import SwiftSyntax

/// A `var` of a `@Synchronized` class, as the macros see it: one that the instance's lock
/// protects, one left alone, or one that cannot be made safe.
enum StoredProperty {
    /// A stored `var` with one name: it gets accessors that take the lock and backing storage.
    case synchronized(name: TokenSyntax, binding: PatternBindingSyntax)
    /// `let`, computed, `static`/`class`, or `nonisolated(unsafe)`: not touched.
    case leftAlone
    /// A `var` the lock cannot protect: a compile error at `node`.
    case unsupported(SynchronizedDiagnostic, node: any SyntaxProtocol)

    init(_ variable: VariableDeclSyntax) {
        if variable.bindingSpecifier.tokenKind != .keyword(.var)
            || variable.modifiers.contains(where: Self.leavesAlone)
        {
            self = .leftAlone
            return
        }
        guard variable.bindings.count == 1, let binding = variable.bindings.first else {
            self = .unsupported(.severalBindings, node: variable.bindings)
            return
        }
        if let accessors = binding.accessorBlock {
            // Only observers make a stored property with an accessor block; the rest are computed.
            if case .accessors(let list) = accessors.accessors,
                list.allSatisfy({ [.keyword(.willSet), .keyword(.didSet)].contains($0.accessorSpecifier.tokenKind) })
            {
                self = .unsupported(.observedProperty, node: accessors)
            } else {
                self = .leftAlone
            }
            return
        }
        guard let pattern = binding.pattern.as(IdentifierPatternSyntax.self) else {
            self = .unsupported(.destructuringPattern, node: binding.pattern)
            return
        }
        if let lazy = variable.modifiers.first(where: { $0.name.tokenKind == .keyword(.lazy) }) {
            self = .unsupported(.lazyProperty, node: lazy)
            return
        }
        if !variable.attributes.allSatisfy(Self.isHarmless) {
            self = .unsupported(.attributedProperty, node: variable.attributes)
            return
        }
        self = .synchronized(name: pattern.identifier, binding: binding)
    }

    /// `static`, `class` and `nonisolated(unsafe)` properties are not the instance's state.
    private static func leavesAlone(_ modifier: DeclModifierSyntax) -> Bool {
        switch modifier.name.tokenKind {
        case .keyword(.static), .keyword(.class): true
        case .keyword(.nonisolated): modifier.detail?.detail.text == "unsafe"
        default: false
        }
    }

    /// Attributes that change nothing about how the value is stored: `@available`, and the
    /// attribute `@Synchronized` itself adds.
    private static func isHarmless(_ element: AttributeListSyntax.Element) -> Bool {
        guard case .attribute(let attribute) = element else { return false }
        return ["available", SynchronizedPropertyMacro.name].contains(attribute.attributeName.trimmedDescription)
    }
}
#endif
