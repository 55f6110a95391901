#if Macros
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// What `@Synchronized` attaches to each stored `var`: backing storage that only the instance's
/// lock guards (a peer), and accessors that take the lock — `get` its shared side, `set` and
/// `_modify` its exclusive side (so that `+=` and `append` are one atomic read-modify-write) —
/// with an `init` accessor so that default values and assignments in `init` keep working.
public enum SynchronizedPropertyMacro {
    /// The attribute's name, as `@Synchronized` writes it.
    static let name = "SynchronizedProperty"

    /// The backing storage's name for a property.
    static func storageName(_ property: TokenSyntax) -> TokenSyntax {
        "_\(raw: property.trimmedDescription)"
    }

    /// The property's name, if it is a stored `var` that the lock protects.
    static func synchronizedName(_ declaration: some DeclSyntaxProtocol) -> (TokenSyntax, VariableDeclSyntax)? {
        guard let variable = declaration.as(VariableDeclSyntax.self),
            case .synchronized(let name, _) = StoredProperty(variable)
        else { return nil }
        return (name, variable)
    }
}

extension SynchronizedPropertyMacro: AccessorMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        guard let (name, _) = synchronizedName(declaration) else { return [] }
        let storage = storageName(name)
        let lock = SynchronizedMacro.lockName
        return [
            """
            @storageRestrictions(initializes: \(storage))
            init(initialValue) {
                // The class's Sendable conformance cannot see this storage: check its type here.
                func sendable<Value: Sendable>(_ value: Value) -> Value { value }
                \(storage) = sendable(initialValue)
            }
            """,
            """
            get {
                \(raw: lock).withReadLock { \(storage) }
            }
            """,
            """
            set {
                \(raw: lock).withLock { \(storage) = newValue }
            }
            """,
            """
            _modify {
                \(raw: lock).lock()
                defer { \(raw: lock).unlock() }
                yield &\(storage)
            }
            """,
        ]
    }
}

extension SynchronizedPropertyMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let (name, variable) = synchronizedName(declaration), let binding = variable.bindings.first else {
            return []
        }
        // `weak` and `unowned` belong to the storage; access and `private(set)` to the property.
        let ownership = variable.modifiers
            .filter { [.keyword(.weak), .keyword(.unowned)].contains($0.name.tokenKind) }
            .map { "\($0.trimmedDescription) " }
            .joined()
        let type = binding.typeAnnotation.map { $0.trimmedDescription } ?? ""
        let initializer = binding.initializer.map { " \($0.trimmedDescription)" } ?? ""
        // The lock, not the runtime's exclusivity check, keeps accesses apart.
        return [
            """
            @exclusivity(unchecked) nonisolated(unsafe) private \(raw: ownership)var \(storageName(name))\(raw: type)\(raw: initializer)
            """
        ]
    }
}
#endif
