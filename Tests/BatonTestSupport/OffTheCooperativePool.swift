import Dispatch
import Testing

/// Runs each test of the suite on a dispatch queue of its own instead of the cooperative pool.
///
/// For tests that keep a thread busy or blocked for seconds (the leak tests' loops over 100,000
/// objects, the model checker's scheduler waiting on its threads). On the cooperative pool,
/// whose width is the number of cores (two in CI), a few of them at once hold every thread of it,
/// and the async tests running beside them (bounded waits, the HTTP fault tests, the stress
/// runs' tasks) get no thread until their limits pass. On queues of their own they share the
/// cores through the kernel's scheduler like any other thread.
public struct OffTheCooperativePool: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard testCase != nil else { return try await function() }
        try await withTaskExecutorPreference(QueueExecutor(label: test.name)) { try await function() }
    }
}

extension Trait where Self == OffTheCooperativePool {
    /// Runs each test on a dispatch queue of its own; see ``OffTheCooperativePool``.
    public static var offTheCooperativePool: Self { Self() }
}

/// A task executor on a serial dispatch queue (which gets a thread of Dispatch's, not of the
/// cooperative pool).
public final class QueueExecutor: TaskExecutor {
    private let queue: DispatchQueue

    public init(label: String) {
        queue = DispatchQueue(label: label)
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
