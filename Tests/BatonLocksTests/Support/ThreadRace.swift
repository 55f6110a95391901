import BatonInternals
import BatonTesting
import Foundation
import Testing

// Real threads for the lock tests. Racing bodies run on threads of their own, not on Swift
// concurrency's cooperative pool (one thread per core, two on the CI machine), so a body that
// blocks in a lock cannot starve the pool.
//
// Every wait here is bounded: a lock that deadlocks or starves a thread makes the test fail
// after `generousTimeout` instead of hanging. The bound is not a timing assertion: a correct
// lock meets it by orders of magnitude.

/// How long a single wait may take before the test counts it as a failure.
let generousTimeout: DispatchTimeInterval = .seconds(10)

/// Waits for `semaphore`; `false` if it was not signalled within `timeout`.
func wait(for semaphore: DispatchSemaphore, timeout: DispatchTimeInterval = generousTimeout) -> Bool {
    semaphore.wait(timeout: .now() + timeout) == .success
}

/// A thread started by ``startThread(_:)``.
struct StartedThread: Sendable {
    fileprivate let finished: DispatchSemaphore

    /// Waits for the thread's body to return; `false` if it has not returned within `timeout`.
    func join(timeout: DispatchTimeInterval = generousTimeout) -> Bool {
        guard wait(for: finished, timeout: timeout) else { return false }
        // Let a later join of the same thread succeed too.
        finished.signal()
        return true
    }
}

/// Runs `body` on a new thread.
func startThread(_ body: @escaping @Sendable () -> Void) -> StartedThread {
    let finished = DispatchSemaphore(value: 0)
    runOnNewThread {
        body()
        finished.signal()
    }
    return StartedThread(finished: finished)
}

/// Runs `body` on another thread and returns its result, or `nil` if it did not return within
/// `timeout` (for example because it waits for a lock that was never released).
func runOnAnotherThread<Result: Sendable>(
    timeout: DispatchTimeInterval = generousTimeout,
    _ body: @escaping @Sendable () -> Result
) -> Result? {
    let result = Locked<Result?>(nil)
    let thread = startThread { result.set(body()) }
    guard thread.join(timeout: timeout) else { return nil }
    return result.get()
}

/// Polls `condition` until it holds; `false` if it still does not hold after `timeout`.
///
/// The pause between polls only keeps the poller from stealing a core from the threads it
/// watches; nothing is inferred from how long anything took.
func eventually(timeout: DispatchTimeInterval = generousTimeout, _ condition: () -> Bool) -> Bool {
    let deadline = DispatchTime.now() + timeout
    while !condition() {
        if DispatchTime.now() >= deadline { return false }
        usleep(50)
    }
    return true
}

/// A thread that takes a lock, says so, and keeps it until told to let go.
struct LockHolder: Sendable {
    private let held = DispatchSemaphore(value: 0)
    private let release = DispatchSemaphore(value: 0)
    private let thread: StartedThread

    /// Starts the thread; `enter` takes the lock around the body it is given, for example
    /// `{ lock.withReadLock($0) }`.
    init(_ enter: @escaping @Sendable (_ body: () -> Void) -> Void) {
        let held = held
        let release = release
        thread = startThread {
            enter {
                held.signal()
                _ = wait(for: release)
            }
        }
    }

    /// Waits until the thread holds the lock; `false` if it does not within `generousTimeout`.
    func waitUntilHeld() -> Bool {
        wait(for: held)
    }

    /// Lets go of the lock and waits for the thread to finish; `false` if it does not in time.
    @discardableResult
    func releaseAndJoin() -> Bool {
        release.signal()
        return thread.join()
    }
}
