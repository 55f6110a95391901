#if Macros
import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// Each misuse of `@Synchronized` is a compile error that says what to do, and the class is
/// left as written (nothing half-expanded).
@Suite struct SynchronizedDiagnosticsTests {
    @Test func onAStruct() {
        assertExpansion(
            """
            @Synchronized
            struct Point {
                var x = 0
            }
            """,
            expandedSource: """
                struct Point {
                    var x = 0
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message:
                        "@Synchronized applies to a final class; a struct is copied rather than shared, so put it in a Protected to share it between threads",
                    line: 1, column: 1)
            ]
        )
    }

    @Test func onAnEnum() {
        assertExpansion(
            """
            @Synchronized
            enum Mode {
                case on, off
            }
            """,
            expandedSource: """
                enum Mode {
                    case on, off
                }
                """,
            diagnostics: [
                DiagnosticSpec(message: "@Synchronized applies to a final class, not an enum", line: 1, column: 1)
            ]
        )
    }

    @Test func onAnActorWithAFixItThatRemovesIt() {
        assertExpansion(
            """
            @Synchronized
            actor Store {
                var items: [Int] = []
            }
            """,
            expandedSource: """
                actor Store {
                    var items: [Int] = []
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "@Synchronized applies to a final class; an actor already serializes access to its state",
                    line: 1, column: 1, fixIts: [FixItSpec(message: "Remove '@Synchronized'")])
            ],
            applyFixIts: ["Remove '@Synchronized'"],
            fixedSource: """

                actor Store {
                    var items: [Int] = []
                }
                """
        )
    }

    @Test func onAProtocol() {
        assertExpansion(
            """
            @Synchronized
            protocol Shape {}
            """,
            expandedSource: """
                protocol Shape {}
                """,
            diagnostics: [DiagnosticSpec(message: "@Synchronized applies to a final class", line: 1, column: 1)]
        )
    }

    @Test func onAClassThatIsNotFinalWithAFixItThatAddsFinal() {
        assertExpansion(
            """
            @Synchronized
            public class Box {
                var value = 0
            }
            """,
            expandedSource: """
                public class Box {
                    var value = 0
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message:
                        "@Synchronized applies to a final class: a subclass could add state that the lock does not protect",
                    line: 2, column: 8, fixIts: [FixItSpec(message: "Add 'final'")])
            ],
            applyFixIts: ["Add 'final'"],
            fixedSource: """
                @Synchronized
                public final class Box {
                    var value = 0
                }
                """
        )
    }

    /// The class's other properties are left as written too: no accessor may refer to a lock
    /// that was not added.
    @Test func onALazyVar() {
        assertExpansion(
            """
            @Synchronized
            final class Parser {
                var source = ""
                lazy var table = [Int]()
            }
            """,
            expandedSource: """
                final class Parser {
                    var source = ""
                    lazy var table = [Int]()
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message:
                        "@Synchronized cannot protect a lazy var: its first read would initialize it outside the lock; initialize it in init instead",
                    line: 4, column: 5)
            ]
        )
    }

    @Test func onALazyVarInsideIfConfig() {
        assertExpansion(
            """
            @Synchronized
            final class Parser {
                #if DEBUG
                lazy var trace = [String]()
                #endif
            }
            """,
            expandedSource: """
                final class Parser {
                    #if DEBUG
                    lazy var trace = [String]()
                    #endif
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message:
                        "@Synchronized cannot protect a lazy var: its first read would initialize it outside the lock; initialize it in init instead",
                    line: 4, column: 5)
            ]
        )
    }

    @Test func onAPropertyWithObservers() {
        assertExpansion(
            """
            @Synchronized
            final class Thermostat {
                var target = 20 {
                    didSet { print(target) }
                }
            }
            """,
            expandedSource: """
                final class Thermostat {
                    var target = 20 {
                        didSet { print(target) }
                    }
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message:
                        "@Synchronized cannot protect a property with willSet or didSet: they would run under the lock; set the property inside withLock { } in a method and do the work there",
                    line: 3, column: 21)
            ]
        )
    }

    @Test func onAPropertyWrapper() {
        assertExpansion(
            """
            @Synchronized
            final class Volume {
                @Clamped var level = 0
            }
            """,
            expandedSource: """
                final class Volume {
                    @Clamped var level = 0
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message:
                        "@Synchronized cannot protect a property with an attribute such as a property wrapper; store the value in a plain var, or mark the property nonisolated(unsafe) and guard it yourself",
                    line: 3, column: 5)
            ]
        )
    }

    @Test func onSeveralPropertiesInOneDeclaration() {
        assertExpansion(
            """
            @Synchronized
            final class Point {
                var x = 0, y = 0
            }
            """,
            expandedSource: """
                final class Point {
                    var x = 0, y = 0
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message:
                        "@Synchronized needs one stored property per declaration; declare each with a 'var' of its own",
                    line: 3, column: 9)
            ]
        )
    }

    @Test func onATuplePattern() {
        assertExpansion(
            """
            @Synchronized
            final class Point {
                var (x, y) = (0, 0)
            }
            """,
            expandedSource: """
                final class Point {
                    var (x, y) = (0, 0)
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message:
                        "@Synchronized cannot protect a property declared by a tuple pattern; declare each with a 'var' of its own",
                    line: 3, column: 9)
            ]
        )
    }
}
#endif
