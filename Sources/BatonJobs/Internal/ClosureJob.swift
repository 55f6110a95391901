/// The job ``JobQueue/addJob(priority:_:)`` makes: one closure, no extras.
final class ClosureJob: Job {
    /// Set at init; read and cleared only by the thread that runs or finalizes the job, which
    /// the job's phase (under JobGraph.lock) makes one at a time. ``doNothing`` once let go of:
    /// a plain function needs no context, and a non-optional closure is cheaper to call, move
    /// and destroy than an optional one.
    @exclusivity(unchecked) private var body: @Sendable () throws -> Void

    init(priority: JobPriority, _ body: @escaping @Sendable () throws -> Void) {
        self.body = body
        super.init(priority: priority)
    }

    override func main() throws {
        // Moved out rather than copied: the body is dropped here as soon as it returns.
        var body: @Sendable () throws -> Void = doNothing
        swap(&body, &self.body)
        try body()
    }

    override func releaseBody() {
        body = doNothing
    }
}

// body is handed from thread to thread only through phase changes under JobGraph.lock.
extension ClosureJob: @unchecked Sendable {}

/// What a closure-holding job keeps in place of a body it has let go of.
@Sendable func doNothing() {}
