#if Macros
import FoundationEssentials
import SwiftSyntaxMacrosGenericTestSupport
import Testing

@Suite struct SynchronizedExpansionTests {
    @Test func warrior() {
        assertExpansion(
            """
            @Synchronized
            final class Warrior {
                var leftHand: String?
                private(set) var swaps = 0
                let name: String

                init(name: String) { self.name = name }
            }
            """,
            expandedSource: """
                final class Warrior {
                    \(expanded("var leftHand: String?", storage: "var _leftHand: String?"))
                    \(expanded("private(set) var swaps", storage: "var _swaps = 0"))
                    let name: String

                    init(name: String) { self.name = name }

                    \(lockMembers("Warrior"))
                }

                extension Warrior: Sendable {
                }
                """
        )
    }

    @Test func aPublicClassGetsAPublicWithLock() {
        assertExpansion(
            """
            @Synchronized
            public final class Counter {
                public var value: Int = 0
            }
            """,
            expandedSource: """
                public final class Counter {
                    \(expanded("public var value: Int", storage: "var _value: Int = 0"))

                    \(lockMembers("Counter", access: "public "))
                }

                extension Counter: Sendable {
                }
                """
        )
    }

    /// `withLock` is as visible as the class where that can matter (`public`, `package`),
    /// whatever the order of the class's modifiers, and carries no modifier for a narrower class.
    @Test(arguments: [
        ("package final", "package "), ("final package", "package "), ("final public", "public "),
        ("internal final", ""), ("fileprivate final", ""), ("private final", ""), ("final", ""),
    ])
    func withLockIsAsVisibleAsTheClass(modifiers: String, access: String) {
        assertExpansion(
            """
            @Synchronized
            \(modifiers) class Counter {
                var value: Int = 0
            }
            """,
            expandedSource: """
                \(modifiers) class Counter {
                    \(expanded("var value: Int", storage: "var _value: Int = 0"))

                    \(lockMembers("Counter", access: access))
                }

                extension Counter: Sendable {
                }
                """
        )
    }

    @Test func letComputedStaticAndUnsafePropertiesAreLeftAlone() {
        assertExpansion(
            """
            @Synchronized
            final class Settings: Sendable {
                let id: Int
                var doubled: Int { id * 2 }
                var named: String {
                    get { "\\(id)" }
                    set {}
                }
                static var shared = 0
                nonisolated(unsafe) var scratch = 0
                @available(*, deprecated) var old = 1
            }
            """,
            expandedSource: """
                final class Settings: Sendable {
                    let id: Int
                    var doubled: Int { id * 2 }
                    var named: String {
                        get { "\\(id)" }
                        set {}
                    }
                    static var shared = 0
                    nonisolated(unsafe) var scratch = 0
                    \(expanded("@available(*, deprecated)\n    var old", storage: "var _old = 1"))

                    \(lockMembers("Settings"))
                }

                extension Settings: Sendable {
                }
                """
        )
    }

    @Test func weakAndUnownedStayOnTheStorage() {
        assertExpansion(
            """
            @Synchronized
            final class Node {
                weak var parent: Node?
                unowned var owner: Owner
            }
            """,
            expandedSource: """
                final class Node {
                    \(expanded("weak var parent: Node?", storage: "weak var _parent: Node?"))
                    \(expanded("unowned var owner: Owner", storage: "unowned var _owner: Owner"))

                    \(lockMembers("Node"))
                }

                extension Node: Sendable {
                }
                """
        )
    }
}
/// A synchronized property as `@Synchronized` expands it: `declaration` with accessors that
/// take the lock, then its private storage declared as `storage`. Member-indented, for
/// interpolation after four spaces.
func expanded(_ declaration: String, storage: String) -> String {
    let name = String(storage.components(separatedBy: "var _")[1].prefix { $0.isLetter || $0.isNumber })
    return """
        \(declaration) {
                @storageRestrictions(initializes: _\(name))
                init(initialValue) {
                    // The class's Sendable conformance cannot see this storage: check its type here.
                    func sendable<Value: Sendable>(_ value: Value) -> Value {
                        value
                    }
                    _\(name) = sendable(initialValue)
                }
                get {
                    _batonLock.withReadLock {
                        _\(name)
                    }
                }
                set {
                    _batonLock.withLock {
                        _\(name) = newValue
                    }
                }
                _modify {
                    _batonLock.lock()
                    defer {
                        _batonLock.unlock()
                    }
                    yield &_\(name)
                }
            }

            @exclusivity(unchecked) nonisolated(unsafe) private \(storage)
        """
}

/// The lock and `withLock` that `@Synchronized` adds to a class, member-indented.
func lockMembers(_ className: String, access: String = "") -> String {
    """
    private let _batonLock = BatonLocks.RecursiveReadWriteLock(name: "\(className)")

        /// Runs `body` while holding this instance's lock, and returns what it returns: what
        /// `body` reads and writes of the instance's properties is one atomic step. `body` may
        /// use the properties and call methods that take the lock again.
        \(access)func withLock<Result, Failure: Error>(
            file: StaticString = #fileID, line: UInt = #line,
            _ body: () throws(Failure) -> Result
        ) throws(Failure) -> Result {
            try _batonLock.withLock(file: file, line: line, body)
        }
    """
}
#endif
