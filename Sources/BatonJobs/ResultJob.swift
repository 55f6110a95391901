import BatonLocks

/// A job whose body returns a value or throws a typed error, both readable once it finished.
///
/// ```swift
/// let size = ResultJob(name: "size") { () throws(IOError) -> Int in try measure(file) }
/// try queue.add(size)
/// let bytes = try await size.value                 // waits, then returns or throws
/// if case .failure(let error) = try size.result { … } // IOError, typed
/// ```
///
/// A dependent reads it directly (capture the job) or with ``Job/dependencyValues(_:)``.
///
/// Thread safety: every member may be used from any thread.
public final class ResultJob<Output: Sendable, Failure: Error>: Job {
    /// Set at init; read and cleared only by the thread that runs or finalizes the job, which
    /// the job's phase (under JobGraph.lock) makes one at a time.
    private var body: (@Sendable () throws(Failure) -> Output)?
    /// Written once by the running thread before the job finishes; read only under
    /// JobGraph.lock after the finished phase is seen there.
    private var output: Result<Output, Failure>?

    /// Creates a job that computes a value.
    public init(
        name: String? = nil, priority: JobPriority = .normal,
        _ body: @escaping @Sendable () throws(Failure) -> Output
    ) {
        self.body = body
        super.init(name: name, priority: priority)
    }

    /// The value or the typed error the body produced.
    ///
    /// - Throws: ``JobError/notFinished(job:)`` before the job finished;
    ///   ``JobError/cancelled(job:reason:)`` when it was cancelled (it has no result then).
    public var result: Result<Output, Failure> {
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
        guard let body else { return .succeeded }
        do throws(Failure) {
            output = .success(try body())
            return .succeeded
        } catch {
            output = .failure(error)
            if error is CancellationError { return .cancelled(.requested) }
            return .failed(error)
        }
    }

    override func releaseBody() {
        body = nil
    }

    override func outputValue() -> Any? {
        let (phase, output) = JobGraph.lock.withLock { (machine.phase, self.output) }
        guard case .finished(.succeeded) = phase, case .success(let value)? = output else { return nil }
        return value
    }
}

// body and output are handed from thread to thread only through phase changes under
// JobGraph.lock (written before the job finishes, read after that is seen under the lock).
extension ResultJob: @unchecked Sendable {}
