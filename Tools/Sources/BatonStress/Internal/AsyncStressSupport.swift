import Atomics
import BatonTesting
import Foundation

extension StressSession {
    /// Runs `body` in a task and waits for it at most the hang timeout; reports a hang and
    /// returns nil if it has not finished by then (the task is cancelled and abandoned).
    func task<Result: Sendable>(_ what: String, _ body: @escaping @Sendable () async -> Result) -> Result? {
        let done = DispatchSemaphore(value: 0)
        let result = ManagedAtomicResult<Result>()
        let task = Task.detached {
            result.set(await body())
            done.signal()
        }
        guard done.wait(timeout: .now() + options.hangTimeout.dispatchInterval) == .success else {
            task.cancel()
            violations.report("hang: \(what) did not finish within \(options.hangTimeout)")
            return nil
        }
        return result.get()
    }
}

/// A result handed from a task to the thread that waits for it.
final class ManagedAtomicResult<Value: Sendable>: @unchecked Sendable {  // `lock` guards `value`
    private let lock = NSLock()
    private var value: Value?

    func set(_ value: Value) {
        lock.withLock { self.value = value }
    }

    func get() -> Value? {
        lock.withLock { value }
    }
}

/// Polls `condition` from a task until it holds or `timeout` passes; whether it held.
func poll(timeout: Duration, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        if ContinuousClock.now >= deadline { return false }
        try? await Task.sleep(for: .microseconds(200))
    }
    return true
}
