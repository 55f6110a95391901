#if Lifecycle
import ServiceLifecycle

/// A ``JobQueue`` as a swift-service-lifecycle `Service`: it runs until its `ServiceGroup` shuts
/// down gracefully, then shuts the queue down
/// (``JobQueue/shutDown(gracePeriod:clock:finishingQueuedJobs:)``) and returns when every job
/// has ended.
///
/// ```swift
/// let queue = JobQueue(name: "thumbnails", maxConcurrentJobs: 4)
/// let group = ServiceGroup(
///     services: [JobQueueService(queue, gracePeriod: .seconds(20)), server],
///     gracefulShutdownSignals: [.sigterm],
///     logger: logger)
/// try await group.run()
/// ```
///
/// The queue takes jobs from the moment it is created, whether or not the service runs yet: the
/// service only ends it. On graceful shutdown the queue refuses new jobs, cancels the queued
/// ones (or, with `finishingQueuedJobs`, lets them start), gives running jobs `gracePeriod`,
/// then cancels what is left; `run()` returns once every job has ended, so the group moves on
/// to the services before it only when no job of the queue is running. If the group cancels the
/// service instead (a cancellation signal, a failed service, or the group's
/// `maximumGracefulShutdownDuration` running out), the grace period ends at once: every job is
/// cancelled, and `run()` still returns only when they have ended.
///
/// A `ServiceGroup` shuts its services down in reverse order, the last one first: list the queue
/// before what adds jobs to it (a server), so that those callers have stopped when the queue
/// stops taking jobs.
///
/// Available with Baton's `Lifecycle` trait, which adds swift-server/swift-service-lifecycle.
///
/// Thread safety: a value type; `Sendable`.
public struct JobQueueService<C: Clock>: Service, CustomStringConvertible {
    /// The queue the service shuts down.
    public let queue: JobQueue
    /// How long running jobs have, once graceful shutdown begins, before they are cancelled.
    public let gracePeriod: C.Duration
    /// The clock the grace period runs on.
    public let clock: C
    /// Whether jobs queued when shutdown begins may still start in the grace period.
    public let finishingQueuedJobs: Bool

    /// A service that shuts `queue` down with a grace period on `clock`.
    ///
    /// - Parameters:
    ///   - queue: The queue to shut down.
    ///   - gracePeriod: How long running jobs have before they are cancelled.
    ///   - clock: The clock the grace period runs on; a manual clock in tests.
    ///   - finishingQueuedJobs: Whether jobs that have not started may still start during the
    ///     grace period, rather than being cancelled at once.
    public init(_ queue: JobQueue, gracePeriod: C.Duration, clock: C, finishingQueuedJobs: Bool = false) {
        self.queue = queue
        self.gracePeriod = gracePeriod
        self.clock = clock
        self.finishingQueuedJobs = finishingQueuedJobs
    }

    /// Waits for graceful shutdown (or cancellation), then shuts the queue down and returns
    /// when every job has ended.
    public func run() async {
        // Returns when graceful shutdown begins; throws when the task is cancelled first, and
        // the cancelled task then cuts the queue's grace period short.
        try? await gracefulShutdown()
        await queue.shutDown(gracePeriod: gracePeriod, clock: clock, finishingQueuedJobs: finishingQueuedJobs)
    }

    /// The queue's name, as the group's logs show the service.
    public var description: String { "JobQueueService(\(queue.name))" }
}

extension JobQueueService where C == ContinuousClock {
    /// A service that shuts `queue` down with a grace period on `ContinuousClock`.
    ///
    /// - Parameters:
    ///   - queue: The queue to shut down.
    ///   - gracePeriod: How long running jobs have before they are cancelled.
    ///   - finishingQueuedJobs: Whether jobs that have not started may still start during the
    ///     grace period, rather than being cancelled at once.
    public init(_ queue: JobQueue, gracePeriod: Duration, finishingQueuedJobs: Bool = false) {
        self.init(queue, gracePeriod: gracePeriod, clock: ContinuousClock(), finishingQueuedJobs: finishingQueuedJobs)
    }
}
#endif
