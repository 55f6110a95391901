/// The job ``JobQueue/addJob(priority:_:)`` makes: one closure, no extras.
final class ClosureJob: Job {
    /// Set at init; read and cleared only by the thread that runs or finalizes the job, which
    /// the job's phase (under JobGraph.lock) makes one at a time.
    private var body: (@Sendable () throws -> Void)?

    init(priority: JobPriority, _ body: @escaping @Sendable () throws -> Void) {
        self.body = body
        super.init(priority: priority)
    }

    override func main() throws {
        // Taken rather than copied: the body is dropped here as soon as it returns.
        let body = body.take()
        try body?()
    }

    override func releaseBody() {
        body = nil
    }
}

// body is handed from thread to thread only through phase changes under JobGraph.lock.
extension ClosureJob: @unchecked Sendable {}
