#if Macros
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
                    var leftHand: String? {
                        @storageRestrictions(initializes: _leftHand)
                        init(initialValue) {
                            // The class's Sendable conformance cannot see this storage: check its type here.
                            func sendable<Value: Sendable>(_ value: Value) -> Value {
                                value
                            }
                            _leftHand = sendable(initialValue)
                        }
                        get {
                            _batonLock.withLock {
                                _leftHand
                            }
                        }
                        set {
                            _batonLock.withLock {
                                _leftHand = newValue
                            }
                        }
                        _modify {
                            _batonLock.lock()
                            defer {
                                _batonLock.unlock()
                            }
                            yield &_leftHand
                        }
                    }

                    @exclusivity(unchecked) nonisolated(unsafe) private var _leftHand: String?
                    private(set) var swaps {
                        @storageRestrictions(initializes: _swaps)
                        init(initialValue) {
                            // The class's Sendable conformance cannot see this storage: check its type here.
                            func sendable<Value: Sendable>(_ value: Value) -> Value {
                                value
                            }
                            _swaps = sendable(initialValue)
                        }
                        get {
                            _batonLock.withLock {
                                _swaps
                            }
                        }
                        set {
                            _batonLock.withLock {
                                _swaps = newValue
                            }
                        }
                        _modify {
                            _batonLock.lock()
                            defer {
                                _batonLock.unlock()
                            }
                            yield &_swaps
                        }
                    }

                    @exclusivity(unchecked) nonisolated(unsafe) private var _swaps = 0
                    let name: String

                    init(name: String) { self.name = name }

                    private let _batonLock = BatonLocks.RecursiveLock(name: "Warrior")

                    /// Runs `body` while holding this instance's lock, and returns what it returns: what
                    /// `body` reads and writes of the instance's properties is one atomic step. `body` may
                    /// use the properties and call methods that take the lock again.
                    func withLock<Result, Failure: Error>(
                        file: StaticString = #fileID, line: UInt = #line,
                        _ body: () throws(Failure) -> Result
                    ) throws(Failure) -> Result {
                        try _batonLock.withLock(file: file, line: line, body)
                    }
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
                    public var value: Int {
                        @storageRestrictions(initializes: _value)
                        init(initialValue) {
                            // The class's Sendable conformance cannot see this storage: check its type here.
                            func sendable<Value: Sendable>(_ value: Value) -> Value {
                                value
                            }
                            _value = sendable(initialValue)
                        }
                        get {
                            _batonLock.withLock {
                                _value
                            }
                        }
                        set {
                            _batonLock.withLock {
                                _value = newValue
                            }
                        }
                        _modify {
                            _batonLock.lock()
                            defer {
                                _batonLock.unlock()
                            }
                            yield &_value
                        }
                    }

                    @exclusivity(unchecked) nonisolated(unsafe) private var _value: Int = 0

                    private let _batonLock = BatonLocks.RecursiveLock(name: "Counter")

                    /// Runs `body` while holding this instance's lock, and returns what it returns: what
                    /// `body` reads and writes of the instance's properties is one atomic step. `body` may
                    /// use the properties and call methods that take the lock again.
                    public func withLock<Result, Failure: Error>(
                        file: StaticString = #fileID, line: UInt = #line,
                        _ body: () throws(Failure) -> Result
                    ) throws(Failure) -> Result {
                        try _batonLock.withLock(file: file, line: line, body)
                    }
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
                    @available(*, deprecated)
                    var old {
                        @storageRestrictions(initializes: _old)
                        init(initialValue) {
                            // The class's Sendable conformance cannot see this storage: check its type here.
                            func sendable<Value: Sendable>(_ value: Value) -> Value {
                                value
                            }
                            _old = sendable(initialValue)
                        }
                        get {
                            _batonLock.withLock {
                                _old
                            }
                        }
                        set {
                            _batonLock.withLock {
                                _old = newValue
                            }
                        }
                        _modify {
                            _batonLock.lock()
                            defer {
                                _batonLock.unlock()
                            }
                            yield &_old
                        }
                    }

                    @exclusivity(unchecked) nonisolated(unsafe) private var _old = 1

                    private let _batonLock = BatonLocks.RecursiveLock(name: "Settings")

                    /// Runs `body` while holding this instance's lock, and returns what it returns: what
                    /// `body` reads and writes of the instance's properties is one atomic step. `body` may
                    /// use the properties and call methods that take the lock again.
                    func withLock<Result, Failure: Error>(
                        file: StaticString = #fileID, line: UInt = #line,
                        _ body: () throws(Failure) -> Result
                    ) throws(Failure) -> Result {
                        try _batonLock.withLock(file: file, line: line, body)
                    }
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
                    weak var parent: Node? {
                        @storageRestrictions(initializes: _parent)
                        init(initialValue) {
                            // The class's Sendable conformance cannot see this storage: check its type here.
                            func sendable<Value: Sendable>(_ value: Value) -> Value {
                                value
                            }
                            _parent = sendable(initialValue)
                        }
                        get {
                            _batonLock.withLock {
                                _parent
                            }
                        }
                        set {
                            _batonLock.withLock {
                                _parent = newValue
                            }
                        }
                        _modify {
                            _batonLock.lock()
                            defer {
                                _batonLock.unlock()
                            }
                            yield &_parent
                        }
                    }

                    @exclusivity(unchecked) nonisolated(unsafe) private weak var _parent: Node?
                    unowned var owner: Owner {
                        @storageRestrictions(initializes: _owner)
                        init(initialValue) {
                            // The class's Sendable conformance cannot see this storage: check its type here.
                            func sendable<Value: Sendable>(_ value: Value) -> Value {
                                value
                            }
                            _owner = sendable(initialValue)
                        }
                        get {
                            _batonLock.withLock {
                                _owner
                            }
                        }
                        set {
                            _batonLock.withLock {
                                _owner = newValue
                            }
                        }
                        _modify {
                            _batonLock.lock()
                            defer {
                                _batonLock.unlock()
                            }
                            yield &_owner
                        }
                    }

                    @exclusivity(unchecked) nonisolated(unsafe) private unowned var _owner: Owner

                    private let _batonLock = BatonLocks.RecursiveLock(name: "Node")

                    /// Runs `body` while holding this instance's lock, and returns what it returns: what
                    /// `body` reads and writes of the instance's properties is one atomic step. `body` may
                    /// use the properties and call methods that take the lock again.
                    func withLock<Result, Failure: Error>(
                        file: StaticString = #fileID, line: UInt = #line,
                        _ body: () throws(Failure) -> Result
                    ) throws(Failure) -> Result {
                        try _batonLock.withLock(file: file, line: line, body)
                    }
                }

                extension Node: Sendable {
                }
                """
        )
    }
}
#endif
