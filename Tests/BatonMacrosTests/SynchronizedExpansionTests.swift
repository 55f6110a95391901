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

    /// Inside a section, a property and `self.property` are its storage; outside one they are
    /// the property. The rewritten call keeps a body passed in parentheses, and `self.withLock`.
    @Test func aSectionReachesTheStorageDirectly() {
        assertExpansion(
            """
            @Synchronized
            final class Counter {
                var value = 0
                var log: [Int] = []

                func bump() -> Int {
                    let before = value
                    withLock {
                        value += 1
                        self.log.append(value)
                    }
                    self.withLock({ log.removeAll() })
                    return before
                }
            }
            """,
            expandedSource: """
                final class Counter {
                    \(expanded("var value", storage: "var _value = 0"))
                    \(expanded("var log: [Int]", storage: "var _log: [Int] = []"))

                    func bump() -> Int {
                        let before = value
                        withLock {
                            _value += 1
                            self._log.append(_value)
                        }
                        self.withLock({
                                _log.removeAll()
                            })
                        return before
                    }

                    \(lockMembers("Counter"))
                }

                extension Counter: Sendable {
                }
                """
        )
    }

    /// What may run after the section, without the lock, keeps the accessors: a closure inside
    /// it, a local function, a section with a capture list. So do the members of another
    /// instance and key paths, and methods the attribute leaves alone: static, inlinable, or
    /// with no section that uses a property.
    @Test func whatMayRunLaterOrIsNotThisInstancesKeepsTheAccessors() {
        // As written and as expanded: the attribute leaves every one of these methods alone.
        let methods = """
                func later(_ other: Counter) -> () -> Int {
                    withLock {
                        let read = { self.value }
                        func helper() -> Int { value }
                        _ = other.value + helper()
                        _ = \\Counter.value
                        withLock { [self] in value = 1 }
                        return read
                    }
                }

                static func make() -> Counter { Counter() }

                @inlinable func peek() -> Int { withLock { value } }

                func none() -> Int { withLock { 1 } }
            """
        assertExpansion(
            """
            @Synchronized
            final class Counter {
                var value = 0

            \(methods)
            }
            """,
            expandedSource: """
                final class Counter {
                    \(expanded("var value", storage: "var _value = 0"))

                \(methods)

                    \(lockMembers("Counter"))
                }

                extension Counter: Sendable {
                }
                """
        )
    }

    /// A property whose name the method binds anywhere keeps its accessors throughout the
    /// method; the others are still reached directly. A method that binds `withLock` has no
    /// section.
    @Test func aNameTheMethodBindsKeepsTheAccessors() {
        assertExpansion(
            """
            @Synchronized
            final class Counter {
                var value = 0
                var limit = 10
                var error: String?

                func set(value: Int) {
                    withLock {
                        self.value = value
                        limit += 1
                    }
                }

                func check() throws {
                    withLock {
                        if let error { print(error) }
                        do { try step() } catch { print(error) }
                        limit -= 1
                    }
                }

                func step() throws {}

                func shadowed() {
                    func withLock(_ body: () -> Void) { body() }
                    withLock { limit = 0 }
                }
            }
            """,
            expandedSource: """
                final class Counter {
                    \(expanded("var value", storage: "var _value = 0"))
                    \(expanded("var limit", storage: "var _limit = 10"))
                    \(expanded("var error: String?", storage: "var _error: String?"))

                    func set(value: Int) {
                        withLock {
                            self.value = value
                            _limit += 1
                        }
                    }

                    func check() throws {
                        withLock {
                            if let error {
                                print(error)
                            }
                            do {
                                try step()
                            } catch {
                                print(error)
                            }
                            _limit -= 1
                        }
                    }

                    func step() throws {}

                    func shadowed() {
                        func withLock(_ body: () -> Void) { body() }
                        withLock { limit = 0 }
                    }

                    \(lockMembers("Counter"))
                }

                extension Counter: Sendable {
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
