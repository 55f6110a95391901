#if Macros
import SwiftDiagnostics

/// What `@Synchronized` reports when it cannot make a declaration thread-safe. Every message
/// says what to do instead.
enum SynchronizedDiagnostic: String, DiagnosticMessage {
    case onStruct
    case onEnum
    case onActor
    case onOther
    case notFinal
    case lazyProperty
    case observedProperty
    case attributedProperty
    case severalBindings
    case destructuringPattern

    var message: String {
        switch self {
        case .onStruct:
            "@Synchronized applies to a final class; a struct is copied rather than shared, so put it in a Protected to share it between threads"
        case .onEnum:
            "@Synchronized applies to a final class, not an enum"
        case .onActor:
            "@Synchronized applies to a final class; an actor already serializes access to its state"
        case .onOther:
            "@Synchronized applies to a final class"
        case .notFinal:
            "@Synchronized applies to a final class: a subclass could add state that the lock does not protect"
        case .lazyProperty:
            "@Synchronized cannot protect a lazy var: its first read would initialize it outside the lock; initialize it in init instead"
        case .observedProperty:
            "@Synchronized cannot protect a property with willSet or didSet: they would run under the lock; set the property inside withLock { } in a method and do the work there"
        case .attributedProperty:
            "@Synchronized cannot protect a property with an attribute such as a property wrapper; store the value in a plain var, or mark the property nonisolated(unsafe) and guard it yourself"
        case .severalBindings:
            "@Synchronized needs one stored property per declaration; declare each with a 'var' of its own"
        case .destructuringPattern:
            "@Synchronized cannot protect a property declared by a tuple pattern; declare each with a 'var' of its own"
        }
    }

    var diagnosticID: MessageID { MessageID(domain: "BatonMacros", id: rawValue) }
    var severity: DiagnosticSeverity { .error }
}

/// A fix-it's label.
struct SynchronizedFixIt: FixItMessage {
    let message: String
    var fixItID: MessageID { MessageID(domain: "BatonMacros", id: message) }

    static let addFinal = SynchronizedFixIt(message: "Add 'final'")
    static let removeAttribute = SynchronizedFixIt(message: "Remove '@Synchronized'")
}
#endif
