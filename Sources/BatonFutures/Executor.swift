import Dispatch

/// Where a future runs a callback: on the completing thread, on a `DispatchQueue`, or through a
/// function of your own.
///
/// ```swift
/// let ui = DispatchQueue(label: "ordered")          // serial: callbacks arrive in order
/// future.whenComplete(on: .queue(ui)) { result in show(result) }
/// ```
///
/// - ``inline`` runs the callback on the thread that completes the future (or, when the future
///   is already complete, on the thread that registers the callback). It is the cheapest, and
///   the callback must be short and must not block.
/// - ``queue(_:)`` submits the callback to a `DispatchQueue` with `async`. Callbacks sent to one
///   serial queue run one at a time, in the order they were submitted.
/// - ``init(_:)`` wraps any other scheduler, e.g. an event loop's `execute`.
///
/// Thread safety: an `Executor` is an immutable value; use it from any thread.
///
/// - Warning: Inline callbacks that complete other futures inline form a chain; Baton runs deep
///   chains iteratively rather than recursively (see ``Future``), so a callback must not block
///   waiting for a future that a later link of the same chain completes.
public struct Executor: Sendable {
    @usableFromInline
    enum Kind: Sendable {
        case inline
        case queue(DispatchQueue)
        case custom(@Sendable (@escaping @Sendable () -> Void) -> Void)
        /// As `inline`, for the callback of a blocking wait, which the semaphore names: a wait
        /// that times out finds its callback by it and takes it back out of the future.
        case inlineWaiter(DispatchSemaphore)
    }

    @usableFromInline let kind: Kind

    /// Runs callbacks on the thread that completes the future, with no hop.
    // Computed, not a stored `static let`: every `whenComplete` reads it, and a stored global
    // costs a once-check and a copy through its accessor each time.
    @inlinable public static var inline: Executor { Executor(kind: .inline) }

    /// Runs callbacks on `queue` with `queue.async`; a serial queue delivers them in order.
    public static func queue(_ queue: DispatchQueue) -> Executor {
        Executor(kind: .queue(queue))
    }

    /// Runs callbacks on the global concurrent queue of the default quality of service.
    public static var global: Executor { .queue(.global()) }

    /// Runs callbacks through `enqueue`, which must run each work item exactly once, soon, on
    /// any thread (for example an event loop's `execute`).
    public init(_ enqueue: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void) {
        kind = .custom(enqueue)
    }

    @usableFromInline
    init(kind: Kind) {
        self.kind = kind
    }

    /// Runs callbacks as ``inline`` does; the callback it runs is the one of a blocking wait on
    /// `semaphore` (see ``Future/wait(timeout:)``).
    static func inlineWaiter(_ semaphore: DispatchSemaphore) -> Executor {
        Executor(kind: .inlineWaiter(semaphore))
    }

    /// Whether this is the executor of the blocking wait on `semaphore`.
    func isWaiter(on semaphore: DispatchSemaphore) -> Bool {
        if case .inlineWaiter(let own) = kind { return own === semaphore }
        return false
    }

    /// Runs `work` as this executor does.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        switch kind {
        case .inline, .inlineWaiter: InlineTrampoline.run(work)
        case .queue(let queue): queue.async(execute: work)
        case .custom(let enqueue): enqueue(work)
        }
    }

    /// Calls `body(argument)` as this executor does; inline it allocates nothing.
    @inlinable
    func run<Argument: Sendable>(_ body: @escaping @Sendable (Argument) -> Void, _ argument: Argument) {
        switch kind {
        case .inline, .inlineWaiter: InlineTrampoline.run(body, argument)
        case .queue(let queue): queue.async { body(argument) }
        case .custom(let enqueue): enqueue { body(argument) }
        }
    }
}
