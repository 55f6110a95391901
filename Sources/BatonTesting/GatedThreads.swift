import BatonInternals
import Dispatch

/// Threads of their own, each parked at a start gate until all of them exist, then released
/// together: how a test races real threads on one object (and how Baton's bench times a race
/// and its stress runs look for violations), without thread creation in the measurement or a
/// head start for the first thread made.
///
/// Threads, not tasks: a body that blocks in a lock must not hold a thread of Swift
/// concurrency's cooperative pool (one per core).
///
/// ```swift
/// let threads = GatedThreads(count: 4) { index in work(index) }
/// threads.open()
/// let stuck = threads.join(timeout: .seconds(10))   // 0: every body returned
/// ```
///
/// Thread safety: the object is driven by the thread that made it; `open` and `join` are not
/// for concurrent calls. The bodies run concurrently with each other.
public final class GatedThreads {
    /// How many threads were started.
    public let count: Int
    private let gate = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    /// Finishes taken from `finished` so far (only the owning thread touches it).
    private var joined = 0
    private var isOpen = false

    /// Starts `count` threads that each run `body(index)`, `index` in `0..<count`, once the gate
    /// opens; returns when all of them are parked at the gate.
    public init(count: Int, body: @escaping @Sendable (_ index: Int) -> Void) {
        precondition(count >= 0, "GatedThreads: the count must not be negative")
        self.count = count
        let ready = DispatchSemaphore(value: 0)
        let gate = gate
        let finished = finished
        for index in 0..<count {
            runOnNewThread {
                ready.signal()
                gate.wait()
                body(index)
                finished.signal()
            }
        }
        for _ in 0..<count { ready.wait() }
    }

    /// Releases every thread at once.
    public func open() {
        precondition(!isOpen, "GatedThreads: the gate is already open")
        isOpen = true
        for _ in 0..<count { gate.signal() }
    }

    /// Waits until every body has returned, or until `timeout` has passed (nil: for as long as
    /// it takes), and returns how many had not returned. A later call goes on waiting for those.
    /// A thread stuck for good (a lost wake-up) cannot be unstuck: it is left behind.
    @discardableResult
    public func join(timeout: Duration? = nil) -> Int {
        precondition(isOpen, "GatedThreads: join before open would wait for ever")
        let deadline = timeout.map { DispatchTime.now() + $0.dispatchInterval } ?? .distantFuture
        while joined < count {
            guard finished.wait(timeout: deadline) == .success else { break }
            joined += 1
        }
        return count - joined
    }
}

/// Runs `body` on a new detached thread (a thread of its own, not one of Dispatch's or of the
/// cooperative pool).
public func runOnNewThread(_ body: @escaping @Sendable () -> Void) {
    let context = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
    #if canImport(Darwin)
    var thread: pthread_t?
    #else
    var thread = pthread_t()
    #endif
    let result = pthread_create(&thread, nil, runThreadBody, context)
    guard result == 0 else {
        Unmanaged<ThreadBody>.fromOpaque(context).release()
        fatalError("runOnNewThread: pthread_create failed with error \(result)")
    }
    #if canImport(Darwin)
    pthread_detach(thread!)
    #else
    pthread_detach(thread)
    #endif
}

/// A thread's body, handed through `pthread_create`'s context pointer.
private final class ThreadBody {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
}

#if canImport(Darwin)
private func runThreadBody(_ context: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer? {
    Unmanaged<ThreadBody>.fromOpaque(context).takeRetainedValue().run()
    return nil
}
#else
private func runThreadBody(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    Unmanaged<ThreadBody>.fromOpaque(context!).takeRetainedValue().run()
    return nil
}
#endif
