import Atomics

/// A value computed once, on first use, by whichever thread asks first: a thread-safe
/// `lazy var` for per-instance state.
///
/// A `static let` already initialises a global once; `lazy var` does not, for an instance
/// property read from several threads (two threads can both run the initializer and race on
/// the store). `Lazy` runs it once:
///
/// ```swift
/// final class Document: Sendable {
///     let text: String
///     private let index: Lazy<SearchIndex>
///
///     init(text: String) {
///         self.text = text
///         index = Lazy { SearchIndex(text) }     // built on the first search, never twice
///     }
///
///     func search(_ word: String) -> [Range<String.Index>] {
///         index.value.ranges(of: word)
///     }
/// }
/// ```
///
/// - **Once.** Concurrent first readers run the initializer once; the others wait (blocked, as
///   for `static let` or `dispatch_once`) and all get its value.
/// - **Free after that.** Once the value is there, a read is one acquiring load and takes no
///   lock.
/// - **No silent deadlock.** Reading the value from inside its own initializer on the same
///   thread stops the program with a message naming the `Lazy`, instead of hanging.
///
/// For an initializer that is `async` (loading a model, opening a connection), use
/// ``AsyncLazy``: a `Lazy` read from a task blocks that task's thread while another thread runs
/// the initializer.
///
/// Thread safety: ``value`` may be read from any thread. The initializer runs on the thread of
/// the first reader, under a Baton futex lock that later first readers wait on.
///
/// - Warning: An initializer that waits for another thread which reads the same `Lazy`
///   deadlocks; only a read on the initializing thread itself is caught.
public final class Lazy<Value: Sendable> {
    /// Set (releasing) once `storage` holds the value; never cleared.
    @usableFromInline let ready: UnsafeAtomic<Bool>
    /// Written once, under `mutex`, before `ready` is set; read only after `ready` is seen.
    @exclusivity(unchecked) @usableFromInline var storage: Value?
    private let mutex = PlatformMutex()
    /// Guarded by `mutex`; dropped once it has run, with what it captured.
    @exclusivity(unchecked) private var make: (@Sendable () -> Value)?
    /// The thread running the initializer, 0 when none: read by that thread only to catch a
    /// read from inside the initializer.
    private let initializingThread: UnsafeAtomic<UInt>
    private let name: String?
    private let file: StaticString
    private let line: UInt

    /// Creates a lazy value; `make` runs on the first read of ``value``.
    ///
    /// - Parameters:
    ///   - name: A name for the message if the value is read from inside its own initializer.
    ///   - file: The creation site's file, for that message; leave the default.
    ///   - line: The creation site's line, for that message; leave the default.
    ///   - make: Computes the value. Runs at most once, on the thread of the first reader.
    public init(
        name: String? = nil, file: StaticString = #fileID, line: UInt = #line,
        _ make: @escaping @Sendable () -> Value
    ) {
        ready = .create(false)
        initializingThread = .create(0)
        self.make = make
        self.name = name
        self.file = file
        self.line = line
    }

    deinit {
        ready.destroy()
        initializingThread.destroy()
        mutex.deallocate()
    }

    /// The value, computed by the initializer on the first read.
    ///
    /// The first read runs the initializer on the calling thread; reads on other threads at the
    /// same time wait for it and return the same value. Later reads take no lock.
    ///
    /// - Precondition: Not read from inside its own initializer (the program stops with a
    ///   message naming this `Lazy`).
    @inlinable
    public var value: Value {
        if _fastPath(ready.load(ordering: .acquiring)) { return storage.unsafelyUnwrapped }
        return initialize()
    }

    /// Whether the value has been computed.
    public var isInitialized: Bool { ready.load(ordering: .acquiring) }

    @usableFromInline
    func initialize() -> Value {
        let me = currentThreadID()
        if initializingThread.load(ordering: .relaxed) == me {
            let named = name.map { " \"\($0)\"" } ?? ""
            fatalError(
                "Lazy<\(Value.self)>\(named) (created at \(SourceSite(file, line))): value read from inside its "
                    + "own initializer; this would deadlock.")
        }
        mutex.lock()
        defer { mutex.unlock() }
        if ready.load(ordering: .relaxed) { return storage.unsafelyUnwrapped }
        initializingThread.store(me, ordering: .relaxed)
        let value = make.unsafelyUnwrapped()
        initializingThread.store(0, ordering: .relaxed)
        storage = value
        make = nil
        ready.store(true, ordering: .releasing)
        return value
    }
}

// `mutex` guards `make` and the one write of `storage`, which `ready` publishes (releasing) to
// the readers that see it set (acquiring); the other stored properties never change.
extension Lazy: @unchecked Sendable {}
