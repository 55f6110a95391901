import Dispatch
import Foundation
import Testing

extension Task where Failure == Never {
    /// The task's value, or `nil` after recording an issue if the task has not finished within
    /// `seconds`: a task that hangs fails the test by name, and the test goes on (awaiting
    /// `value` itself cannot be cut short by the test's time limit).
    public func value(within seconds: Double = 30, sourceLocation: SourceLocation = #_sourceLocation) async
        -> Success?
    {
        let outcome = await bounded(seconds) { await self.value }
        if outcome == nil {
            Issue.record("the task did not finish within \(seconds) s", sourceLocation: sourceLocation)
        }
        return outcome
    }
}

extension Task where Failure == any Error {
    /// The task's value, or `nil` after recording an issue if the task has not finished within
    /// `seconds` (see the non-throwing twin); rethrows the task's error.
    public func value(within seconds: Double = 30, sourceLocation: SourceLocation = #_sourceLocation) async throws
        -> Success?
    {
        let outcome = await bounded(seconds) { await self.result }
        guard let outcome else {
            Issue.record("the task did not finish within \(seconds) s", sourceLocation: sourceLocation)
            return nil
        }
        return try outcome.get()
    }
}

/// What `body` returns, or `nil` if it has not returned within `seconds`; `body` then runs on,
/// unawaited.
private func bounded<Value: Sendable>(_ seconds: Double, _ body: @escaping @Sendable () async -> Value) async
    -> Value?
{
    await withCheckedContinuation { (continuation: CheckedContinuation<Value?, Never>) in
        let once = ResumeOnce(continuation)
        Task { once.resume(await body()) }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { once.resume(nil) }
    }
}

/// A continuation that the first of two racers resumes.
private final class ResumeOnce<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Value?, Never>?  // guarded by `lock`

    init(_ continuation: CheckedContinuation<Value?, Never>) {
        self.continuation = continuation
    }

    func resume(_ value: Value?) {
        let taken = lock.withLock {
            defer { continuation = nil }
            return continuation
        }
        taken?.resume(returning: value)
    }
}
