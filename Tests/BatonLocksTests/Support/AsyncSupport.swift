import Foundation

// Helpers for the tests of the async primitives. Like the thread helpers, every wait is bounded:
// a primitive that loses a wake-up makes the test fail instead of hanging, and the bound is far
// beyond what a correct primitive needs.

/// Polls `condition` from a task, sleeping a millisecond between polls; `false` if it still
/// does not hold after `timeout`.
func waitUntil(timeout: Duration = .seconds(10), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        if ContinuousClock.now >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return true
}

/// A one-shot gate for tasks, built on a checked continuation and an `NSLock`, so that the tests
/// never rely on the primitives under test for their own bookkeeping.
final class Gate: @unchecked Sendable {  // `lock` guards `isOpen` and `waiting`
    private let lock = NSLock()
    private var isOpen = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Suspends until ``open()`` has been called (at once if it has).
    func wait() async {
        await withCheckedContinuation { continuation in
            lock.lock()
            if isOpen {
                lock.unlock()
                continuation.resume()
            } else {
                waiting.append(continuation)
                lock.unlock()
            }
        }
    }

    func open() {
        lock.lock()
        isOpen = true
        let resumed = waiting
        waiting = []
        lock.unlock()
        for continuation in resumed { continuation.resume() }
    }
}

/// How a task that waited for a primitive ended.
enum WaitOutcome: Hashable, Sendable {
    case ranBody
    case cancelled
    case otherError(String)

    init(_ body: () async throws -> Void) async {
        do {
            try await body()
            self = .ranBody
        } catch is CancellationError {
            self = .cancelled
        } catch {
            self = .otherError("\(error)")
        }
    }
}

/// The number of threads in this process (Linux), or `nil` where it cannot be read.
func processThreadCount() -> Int? {
    #if os(Linux)
    return (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task"))?.count
    #else
    return nil
    #endif
}

/// A task executor on a serial dispatch queue that a test can hold still, so that a task
/// resumed meanwhile (handed a permit or a lock) cannot run until the test lets it.
final class HoldableExecutor: TaskExecutor, @unchecked Sendable {  // the queue serialises its jobs
    private let queue = DispatchQueue(label: "HoldableExecutor")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }

    /// Blocks the executor's queue, returning once it is blocked; call the result to let it go.
    func hold() -> @Sendable () -> Void {
        let held = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        queue.async {
            held.signal()
            release.wait()
        }
        held.wait()
        return { release.signal() }
    }
}
