// swift-format-ignore-file
// Every kind of property the macro must handle, with their types spelled out (committed as source, a
// property with accessors needs one; SynchronizedTests' `Tally` keeps inferred types).
// Committed as the compiler expands it, so that the suites that race it run in every
// configuration, the sanitizer builds included, without building swift-syntax (the macro's
// compiler plugin). CommittedExpansionTests expands the class as written below with today's
// macro and fails if the result differs from the code after it; to change the class, change
// both (the test prints the expansion it expects).
//
// The class as written:
//
// @Synchronized
// final class Ledger {
//     var count: Int = 0
//     var entries: [Int] = []
//     var checking: Int
//     var savings: Int
//     var note: String?
//     weak var auditor: Auditor?
//     let opened: Int
//     static let kind = "ledger"
//     nonisolated(unsafe) var unguarded = 0
//     var total: Int { checking + savings }
//
//     init(checking: Int, savings: Int) {
//         self.checking = checking  // through the init accessor
//         self.savings = savings
//         self.opened = 1
//     }
//
//     /// Moves `amount` from checking to savings: a composed operation.
//     func transfer(_ amount: Int) {
//         withLock {
//             checking -= amount
//             savings += amount
//         }
//     }
//
//     /// A method that takes the lock, calling one that takes it again.
//     func transferTwice(_ amount: Int) {
//         withLock {
//             transfer(amount)
//             withLock { transfer(amount) }
//         }
//     }
//
//     struct Overdrawn: Error, Equatable {
//         let shortBy: Int
//     }
//
//     /// Throws a typed error out of the critical section, changing nothing.
//     func withdraw(_ amount: Int) throws(Overdrawn) {
//         try withLock { () throws(Overdrawn) in
//             guard checking >= amount else { throw Overdrawn(shortBy: amount - checking) }
//             checking -= amount
//         }
//     }
// }
//
// Its expansion:
import BatonLocks

final class Ledger {
    var count: Int {
        @storageRestrictions(initializes: _count)
        init(initialValue) {
            // The class's Sendable conformance cannot see this storage: check its type here.
            func sendable<Value: Sendable>(_ value: Value) -> Value {
                value
            }
            _count = sendable(initialValue)
        }
        get {
            _batonLock.withReadLock {
                _count
            }
        }
        set {
            _batonLock.withLock {
                _count = newValue
            }
        }
        _modify {
            _batonLock.lock()
            defer {
                _batonLock.unlock()
            }
            yield &_count
        }
    }

    @exclusivity(unchecked) nonisolated(unsafe) private var _count: Int = 0
    var entries: [Int] {
        @storageRestrictions(initializes: _entries)
        init(initialValue) {
            // The class's Sendable conformance cannot see this storage: check its type here.
            func sendable<Value: Sendable>(_ value: Value) -> Value {
                value
            }
            _entries = sendable(initialValue)
        }
        get {
            _batonLock.withReadLock {
                _entries
            }
        }
        set {
            _batonLock.withLock {
                _entries = newValue
            }
        }
        _modify {
            _batonLock.lock()
            defer {
                _batonLock.unlock()
            }
            yield &_entries
        }
    }

    @exclusivity(unchecked) nonisolated(unsafe) private var _entries: [Int] = []
    var checking: Int {
        @storageRestrictions(initializes: _checking)
        init(initialValue) {
            // The class's Sendable conformance cannot see this storage: check its type here.
            func sendable<Value: Sendable>(_ value: Value) -> Value {
                value
            }
            _checking = sendable(initialValue)
        }
        get {
            _batonLock.withReadLock {
                _checking
            }
        }
        set {
            _batonLock.withLock {
                _checking = newValue
            }
        }
        _modify {
            _batonLock.lock()
            defer {
                _batonLock.unlock()
            }
            yield &_checking
        }
    }

    @exclusivity(unchecked) nonisolated(unsafe) private var _checking: Int
    var savings: Int {
        @storageRestrictions(initializes: _savings)
        init(initialValue) {
            // The class's Sendable conformance cannot see this storage: check its type here.
            func sendable<Value: Sendable>(_ value: Value) -> Value {
                value
            }
            _savings = sendable(initialValue)
        }
        get {
            _batonLock.withReadLock {
                _savings
            }
        }
        set {
            _batonLock.withLock {
                _savings = newValue
            }
        }
        _modify {
            _batonLock.lock()
            defer {
                _batonLock.unlock()
            }
            yield &_savings
        }
    }

    @exclusivity(unchecked) nonisolated(unsafe) private var _savings: Int
    var note: String? {
        @storageRestrictions(initializes: _note)
        init(initialValue) {
            // The class's Sendable conformance cannot see this storage: check its type here.
            func sendable<Value: Sendable>(_ value: Value) -> Value {
                value
            }
            _note = sendable(initialValue)
        }
        get {
            _batonLock.withReadLock {
                _note
            }
        }
        set {
            _batonLock.withLock {
                _note = newValue
            }
        }
        _modify {
            _batonLock.lock()
            defer {
                _batonLock.unlock()
            }
            yield &_note
        }
    }

    @exclusivity(unchecked) nonisolated(unsafe) private var _note: String?
    weak var auditor: Auditor? {
        @storageRestrictions(initializes: _auditor)
        init(initialValue) {
            // The class's Sendable conformance cannot see this storage: check its type here.
            func sendable<Value: Sendable>(_ value: Value) -> Value {
                value
            }
            _auditor = sendable(initialValue)
        }
        get {
            _batonLock.withReadLock {
                _auditor
            }
        }
        set {
            _batonLock.withLock {
                _auditor = newValue
            }
        }
        _modify {
            _batonLock.lock()
            defer {
                _batonLock.unlock()
            }
            yield &_auditor
        }
    }

    @exclusivity(unchecked) nonisolated(unsafe) private weak var _auditor: Auditor?
    let opened: Int
    static let kind = "ledger"
    nonisolated(unsafe) var unguarded = 0
    var total: Int { checking + savings }

    init(checking: Int, savings: Int) {
        self.checking = checking  // through the init accessor
        self.savings = savings
        self.opened = 1
    }

    /// Moves `amount` from checking to savings: a composed operation.
    func transfer(_ amount: Int) {
        withLock {
            _checking -= amount
            _savings += amount
        }
    }

    /// A method that takes the lock, calling one that takes it again.
    func transferTwice(_ amount: Int) {
        withLock {
            transfer(amount)
            withLock { transfer(amount) }
        }
    }

    struct Overdrawn: Error, Equatable {
        let shortBy: Int
    }

    /// Throws a typed error out of the critical section, changing nothing.
    func withdraw(_ amount: Int) throws(Overdrawn) {
        try withLock { () throws(Overdrawn) in
            guard _checking >= amount else {
                throw Overdrawn(shortBy: amount - _checking)
            }
            _checking -= amount
        }
    }

    private let _batonLock = BatonLocks.RecursiveReadWriteLock(name: "Ledger")

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

extension Ledger: Sendable {
}
