import BatonLocks

/// A job whose body is `async`: it may await without holding a worker thread.
///
/// The body runs in a task at the job's quality of service. While it runs it counts against
/// its queue's `maxConcurrentJobs`, but the worker that started it is free for other work.
/// Cancelling the job cancels the task, so the body sees Swift task cancellation
/// (`Task.isCancelled`, `try Task.checkCancellation()`, cancellable awaits).
///
/// ```swift
/// let fetch = AsyncJob(name: "fetch") { try await session.data(from: url).0 }
/// try queue.add(fetch)
/// let data = try await fetch.value
/// ```
///
/// Thread safety: every member may be used from any thread.
public final class AsyncJob<Output: Sendable>: Job {
    /// Guarded by JobGraph.lock; taken when the job starts.
    private var body: (@Sendable () async throws -> Output)?
    /// Guarded by JobGraph.lock.
    private var output: Result<Output, any Error>?
    /// The running task. Guarded by JobGraph.lock.
    private var task: Task<Void, Never>?

    /// Creates a job with an `async` body.
    public init(
        name: String? = nil, priority: JobPriority = .normal,
        _ body: @escaping @Sendable () async throws -> Output
    ) {
        self.body = body
        super.init(name: name, priority: priority)
    }

    /// The value or the error the body produced.
    ///
    /// - Throws: ``JobError/notFinished(job:)`` before the job finished;
    ///   ``JobError/cancelled(job:reason:)`` when it was cancelled.
    public var result: Result<Output, any Error> {
        get throws(JobError) {
            try finishedOutput { self.output }
        }
    }

    /// Waits for the job to finish, then returns its value.
    ///
    /// - Throws: The body's error, or ``JobError/cancelled(job:reason:)``.
    public var value: Output {
        get async throws {
            await finished()
            return try result.get()
        }
    }

    override func perform(qos: JobQualityOfService) -> JobOutcome? {
        let (body, queue) = JobGraph.lock.withLock {
            defer { self.body = nil }
            return (self.body, machine.queue)
        }
        guard let body else { return .succeeded }
        let task = Task(priority: qos.taskPriority) {
            let result: Result<Output, any Error>
            do {
                result = .success(try await JobQueue.$runningAsyncJobQueue.withValue(queue) { try await body() })
            } catch {
                result = .failure(error)
            }
            self.bodyEnded(result)
        }
        let cancelled = JobGraph.lock.withLock {
            self.task = task
            return machine.cancellation != nil
        }
        if cancelled { task.cancel() }
        return nil
    }

    private func bodyEnded(_ result: Result<Output, any Error>) {
        var fx = JobEffects()
        JobGraph.lock.withLock {
            output = result
            task = nil
            let queue = machine.queue
            let outcome: JobOutcome
            switch result {
            case .success: outcome = .succeeded
            case .failure(let error) where error is CancellationError: outcome = .cancelled(.requested)
            case .failure(let error): outcome = .failed(error)
            }
            JobGraph.finishLocked(self, outcome, &fx)
            JobGraph.finalizePendingLocked(&fx)
            queue?.asyncJobFinishedLocked(&fx)
        }
        fx.perform()
    }

    override func releaseBody() {
        JobGraph.lock.withLock { body = nil }
    }

    override func cancelRunningBody() {
        JobGraph.lock.withLock { task }?.cancel()
    }

    override func outputValue() -> Any? {
        JobGraph.lock.withLock {
            guard case .finished(.succeeded) = machine.phase, case .success(let value)? = output else { return nil }
            return value
        }
    }
}

// body, output and task are guarded by JobGraph.lock, like the state Job keeps.
extension AsyncJob: @unchecked Sendable {}
