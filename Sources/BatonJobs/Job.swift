import BatonInternals
import BatonLocks
import Dispatch

/// A unit of work with dependencies, a priority, cancellation and observable state: the
/// `Operation` of Baton.
///
/// Subclass `Job` and override ``Job/main()``, or use one of the ready-made kinds: ``BlockJob``
/// (closures that run concurrently), ``ResultJob`` (a typed result), ``AsyncJob`` (an `async`
/// body). Add jobs to a ``JobQueue``, or run one by hand with ``Job/start()``.
///
/// ```swift
/// let download = ResultJob(name: "download") { try fetchData() }
/// let parse = ResultJob(name: "parse") { try parse(download.result.get()) }
/// try parse.addDependency(download)           // parse starts after download finished
/// parse.completion = { job in print(job.state) }
/// try queue.add([download, parse])
/// let document = try await parse.value
/// ```
///
/// A job becomes ready when every dependency has finished, and finishes exactly once:
/// succeeded, failed with the error ``Job/main()`` threw, or cancelled. If a dependency failed or
/// was cancelled, the job is cancelled too unless its ``Job/dependencyFailurePolicy`` is `.run`.
/// A dependency on itself, or one that closes a cycle, throws ``JobError`` at
/// ``Job/addDependency(_:)`` instead of hanging later.
///
/// Thread safety: every member may be used from any thread. The job's scheduling state lives
/// under one lock shared by all jobs and queues (which is what lets dependencies cross queues
/// without a lock order); observers, the completion handler and the body never run while it
/// is held.
///
/// Memory: a job keeps its dependencies (so it can read their results) until it finishes, and a
/// job keeps the queued jobs that wait for it until it finishes; a finished job holds no other
/// job, so releasing a long finished chain does not recurse. Jobs outside any queue are not
/// kept by what they wait for: a graph of jobs that never run is released when its owner lets
/// go of it.
///
/// - Warning: Observers and the completion handler run on the thread that made the transition
///   or finished the job. They may call back into this job or its queue, but must not wait for
///   this job to finish (``Job/waitUntilFinished()`` inside its own observer or completion waits
///   forever, since the job is finalized only after they return).
open class Job: CustomStringConvertible {
    /// The name used in errors and descriptions; nil for an automatic one.
    public let name: String?

    /// Guarded by `JobGraph.lock`. The lock, not the runtime's exclusivity check, keeps
    /// accesses apart.
    @exclusivity(unchecked) var machine: JobStateMachine

    /// Creates a job that is ready (it has no dependencies yet) and not in any queue.
    ///
    /// - Parameters:
    ///   - name: The job's name in errors and descriptions.
    ///   - priority: Where it goes among its queue's ready jobs.
    public init(name: String? = nil, priority: JobPriority = .normal) {
        self.name = name
        machine = JobStateMachine(priority: priority)
    }

    /// The work. Override it in a subclass; the default does nothing.
    ///
    /// Runs at most once, on a worker of the queue (or the thread that called ``Job/start()``).
    /// Check ``Job/isCancelled`` in long work and return or throw early.
    ///
    /// - Throws: Any error: the job finishes as ``JobOutcome/failed(_:)`` with it
    ///   (`CancellationError` finishes it as cancelled).
    open func main() throws {}

    /// The name, or the type and address.
    public var description: String {
        name ?? "\(type(of: self))(0x\(String(UInt(bitPattern: Unmanaged.passUnretained(self).toOpaque()), radix: 16)))"
    }

    // MARK: State

    /// Where the job is now: pending, ready, executing or finished.
    public var state: JobState {
        JobGraph.lock.withLock { machine.state }
    }

    /// How the job finished, or nil while it has not.
    public var outcome: JobOutcome? {
        if case .finished(let outcome) = state { return outcome }
        return nil
    }

    /// Whether ``Job/cancel()`` was called (or a dependency's failure cancelled the job). A running
    /// body should check it and stop early.
    public var isCancelled: Bool {
        JobGraph.lock.withLock { machine.effectiveCancellation != nil }
    }

    /// Whether the job has finished, in whatever way.
    public var isFinished: Bool {
        JobGraph.lock.withLock { machine.isFinished }
    }

    /// Whether the job's body is running.
    public var isExecuting: Bool {
        if case .executing = state { return true }
        return false
    }

    /// Whether every dependency has finished and the job has not started.
    public var isReady: Bool {
        if case .ready = state { return true }
        return false
    }

    // MARK: Scheduling properties

    /// Where the job goes among its queue's ready jobs: higher first, first come first served
    /// within a level. Raising a job's priority also raises its unfinished dependencies.
    /// Changing it after the job started has no effect.
    public var priority: JobPriority {
        get { JobGraph.lock.withLock { machine.ownPriority } }
        set {
            JobGraph.lock.withLock {
                JobGraph.admitLocked(self)
                let (requeue, effective) = machine.setOwnPriority(newValue)
                if let requeue, let queue = machine.queue {
                    queue.machine.ready[requeue.rawValue].append(self)
                }
                for index in 0..<machine.dependencies.count {
                    let dependency = machine.dependencies[index]
                    guard !dependency.machine.isFinished else { continue }
                    JobGraph.raisePriorityLocked(dependency, to: effective)
                }
            }
        }
    }

    /// The thread priority the body runs at; nil (the default) uses the queue's.
    public var qualityOfService: JobQualityOfService? {
        get { JobGraph.lock.withLock { machine.qualityOfService } }
        set { JobGraph.lock.withLock { machine.qualityOfService = newValue } }
    }

    /// What the job does when a dependency fails or is cancelled: `.cancel` (the default) or
    /// `.run`. Takes effect for dependencies that finish after it is set; for dependencies that
    /// finished while the job was outside a queue, when it is added to one, started or observed.
    public var dependencyFailurePolicy: DependencyFailurePolicy {
        get { JobGraph.lock.withLock { machine.failurePolicy } }
        set { JobGraph.lock.withLock { machine.failurePolicy = newValue } }
    }

    // MARK: Dependencies

    /// Makes this job wait until `job` has finished.
    ///
    /// Works across queues, and before or after either job was added to a queue. A dependency
    /// that has finished already is satisfied at once (and, if it failed, applies the
    /// ``Job/dependencyFailurePolicy``).
    ///
    /// - Complexity: O(1) when nothing depends on this job yet (the usual way of building a
    ///   graph) or `job` has no dependencies; otherwise linear in the unfinished jobs upstream
    ///   of `job` (the cycle check).
    /// - Throws: ``JobError/selfDependency(job:)``; ``JobError/dependencyCycle(cycle:)`` naming
    ///   every job on the cycle, when `job` already waits (transitively) for this one;
    ///   ``JobError/alreadyExecuting(job:)`` or ``JobError/alreadyFinished(job:)`` when this
    ///   job has started.
    public func addDependency(_ job: Job) throws(JobError) {
        if job === self { throw .selfDependency(job: description) }
        var fx = JobEffects()
        try JobGraph.lock.withLock { () throws(JobError) in
            JobGraph.admitLocked(self)
            JobGraph.admitLocked(job)
            try JobGraph.addDependencyLocked(self, job, &fx)
            JobGraph.finalizePendingLocked(&fx)
        }
        fx.perform()
    }

    /// Removes a dependency added with ``Job/addDependency(_:)``. If it was the last unfinished
    /// one, the job becomes ready. Has no effect once the job has started.
    public func removeDependency(_ job: Job) {
        var fx = JobEffects()
        JobGraph.lock.withLock {
            JobGraph.admitLocked(self)
            JobGraph.admitLocked(job)
            JobGraph.removeDependencyLocked(self, job, &fx)
        }
        fx.perform()
    }

    /// The jobs this one waits for (or waited for), in the order added. Empty once the job has
    /// finished: a finished job lets go of its dependencies.
    public var dependencies: [Job] {
        JobGraph.lock.withLock { machine.dependencies.array }
    }

    /// The values of this job's dependencies that produced a value of type `Output` and
    /// succeeded (``ResultJob`` and ``AsyncJob``), in the order the dependencies were added.
    /// Read it from the body: a finished job no longer holds its dependencies.
    ///
    /// ```swift
    /// let sum = ResultJob<Int, Never> { parts.dependencyValues(Int.self).reduce(0, +) }
    /// ```
    public func dependencyValues<Output>(_ type: Output.Type = Output.self) -> [Output] {
        let snapshot = dependencies
        return snapshot.compactMap { $0.outputValue() as? Output }
    }

    // MARK: Running

    /// Cancels the job.
    ///
    /// Before it starts, the job finishes as cancelled without running its body: at once if it
    /// is in a queue, otherwise as soon as it is added to one or started. While it runs,
    /// ``Job/isCancelled`` becomes true for the body to check (an ``AsyncJob``'s task is cancelled).
    /// After it finished, nothing happens.
    public func cancel() {
        var fx = JobEffects()
        JobGraph.lock.withLock {
            JobGraph.admitLocked(self)
            JobGraph.cancelLocked(self, &fx)
            JobGraph.finalizePendingLocked(&fx)
        }
        fx.perform()
    }

    /// Runs the job on the calling thread, without a queue, as `Operation.start()` does.
    ///
    /// A cancelled job finishes as cancelled without running. An ``AsyncJob`` starts its task
    /// and returns at once; await ``Job/finished()`` for it.
    ///
    /// - Throws: ``JobError/notReady(job:unfinishedDependencies:)`` when a dependency has not
    ///   finished; ``JobError/alreadyExecuting(job:)`` or ``JobError/alreadyFinished(job:)`` when
    ///   it was started before; ``JobError/ownedByQueue(job:queue:)`` when it is in a queue.
    public func start() throws(JobError) {
        var fx = JobEffects()
        let run = try JobGraph.lock.withLock { () throws(JobError) -> Bool in
            switch machine.phase {
            case .executing: throw .alreadyExecuting(job: description)
            case .finished: throw .alreadyFinished(job: description)
            case .waiting, .ready: throw .ownedByQueue(job: description, queue: machine.queue?.name ?? "?")
            case .idle: break
            }
            let unfinished = machine.unfinishedCount
            if unfinished > 0 { throw .notReady(job: description, unfinishedDependencies: unfinished) }
            JobGraph.linkLocked(self, strongly: false)  // applies the failure policy; nothing to list
            switch machine.startOutsideQueue() {
            case .finishCancelled(let reason):
                JobGraph.finishLocked(self, .cancelled(reason), &fx)
                JobGraph.finalizePendingLocked(&fx)
                return false
            case .run(let observers):
                if case .drainOutbox = observers { fx.deliver.append(self) }
                return true
            }
        }
        fx.perform()
        guard run else { return }
        let qos = qualityOfService ?? .default
        guard let outcome = perform(qos: qos) else { return }
        releaseBody()
        JobGraph.finish(self, outcome)
    }

    // MARK: Observing

    /// Calls `handler` with the job's current state, then with every later transition, in
    /// order, until (and including) the finished state.
    ///
    /// The handler runs on the thread that made the transition, never two at once for one job,
    /// and never while a Baton lock is held. The finished state reaches observers before the
    /// completion handler runs and before any dependent starts.
    public func observe(_ handler: @escaping @Sendable (JobState) -> Void) {
        var fx = JobEffects()
        JobGraph.lock.withLock {
            // Outside a queue, the job must hear its dependencies finish to report `.ready`.
            if machine.isIdle && !machine.linked { JobGraph.linkLocked(self, strongly: false) }
            if case .drainOutbox = machine.addObserver(handler) { fx.deliver.append(self) }
        }
        fx.perform()
    }

    /// The job's states as an asynchronous sequence: the current one, every transition, and
    /// the end after the finished state.
    public var states: AsyncStream<JobState> {
        AsyncStream { continuation in
            observe { state in
                continuation.yield(state)
                if state.isFinished { continuation.finish() }
            }
        }
    }

    /// Runs once the job has finished, after its observers saw the finished state and before
    /// any dependent starts. Receives the job.
    ///
    /// - Precondition: Set it before the job starts; setting it on a job that is executing or
    ///   finished stops the program with a message naming the job.
    public var completion: (@Sendable (Job) -> Void)? {
        get { JobGraph.lock.withLock { machine.extras?.completion } }
        set {
            let refused = JobGraph.lock.withLock { machine.setCompletion(newValue) }
            if let refused {
                preconditionFailure(
                    "Job.completion set on \(description), which is already \(refused); set it before the job starts")
            }
        }
    }

    // MARK: Waiting

    /// Blocks until the job has finished and its completion handler has run.
    ///
    /// - Warning: Waits forever for a job that is never added to a queue nor started (see
    ///   ``waitUntilFinished(timeout:)`` for a wait that gives up). Do not call it from the job's
    ///   own body, observer or completion handler.
    @available(*, noasync, message: "blocks the thread; use `await finished()`", renamed: "finished()")
    public func waitUntilFinished() {
        let waiter = JobGraph.lock.withLock { machine.addWaiter { .semaphore(DispatchSemaphore(value: 0)) } }
        if case .semaphore(let semaphore)? = waiter { semaphore.wait() }
    }

    /// Blocks until the job has finished and its completion handler has run, or until
    /// `timeout` has passed; returns whether the job finished.
    ///
    /// ```swift
    /// guard export.waitUntilFinished(timeout: .seconds(30)) else {
    ///     export.cancel()   // still running after 30 s
    ///     return
    /// }
    /// ```
    ///
    /// The thread sleeps on a semaphore that the job's finalization signals; nothing polls. A
    /// wait that times out takes its registration back out of the job, so that giving up leaves
    /// nothing behind, however often a caller waits and gives up. A job that finishes just as
    /// the time runs out is reported as finished: the call returns `true` exactly when the job
    /// was finished, with its completion handler run, by the time the call gave up (a job whose
    /// completion handler is still running at the deadline counts as not finished). A zero or
    /// negative `timeout` returns at once whether the job has finished.
    ///
    /// - Parameter timeout: How long to wait at most.
    /// - Returns: `true` if the job has finished and its completion handler has run; `false` if
    ///   the time ran out first (the job goes on).
    /// - Warning: Do not call it from the job's own body, observer or completion handler: the
    ///   job cannot finish while it waits, so it always times out.
    @available(*, noasync, message: "blocks the thread; use `await finished()`")
    public func waitUntilFinished(timeout: Duration) -> Bool {
        guard timeout > .zero else { return JobGraph.lock.withLock { machine.finalized } }
        let semaphore = DispatchSemaphore(value: 0)
        let added = JobGraph.lock.withLock { machine.addWaiter { .semaphore(semaphore) } }
        guard added != nil else { return true }
        if semaphore.wait(timeout: .now() + timeout.dispatchInterval) == .success { return true }
        // Out of time. If the registration is still there, the job has not been finalized: take
        // it out. If it is gone, finalizing the job took it, under the same lock, to signal it.
        return !JobGraph.lock.withLock { machine.removeWaiter(waitingOn: semaphore) }
    }

    /// Suspends until the job has finished and its completion handler has run. Does not end
    /// early when the awaiting task is cancelled.
    public func finished() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let added = JobGraph.lock.withLock { machine.addWaiter { .continuation(continuation) } }
            if added == nil { continuation.resume() }
        }
    }

    // MARK: Hooks for the job kinds

    /// Runs the body on the calling thread; returns how it ended, or nil when an `AsyncJob`
    /// finishes later on its own.
    func perform(qos: JobQualityOfService) -> JobOutcome? {
        do {
            try runBody()
            return .succeeded
        } catch is CancellationError {
            return .cancelled(.requested)
        } catch {
            return .failed(error)
        }
    }

    /// Runs the body once, for ``perform(qos:)``: ``Job/main()`` unless a kind can run it more
    /// cheaply when it is known to run only once (moving its closure out instead of copying it).
    func runBody() throws {
        try main()
    }

    /// Drops the body and what it captures; called once it can no longer run.
    func releaseBody() {}

    /// Tells a running body about a cancellation beyond `isCancelled`.
    func cancelRunningBody() {}

    /// The value a succeeded job produced, for ``Job/dependencyValues(_:)``.
    func outputValue() -> Any? { nil }

    /// A typed job's stored result, read under the graph lock together with the phase.
    ///
    /// - Parameter read: Reads the subclass's stored result; called under the lock.
    /// - Throws: ``JobError/notFinished(job:)`` before the job finished,
    ///   ``JobError/cancelled(job:reason:)`` when it was cancelled (it has no result then).
    func finishedOutput<Output>(_ read: () -> Output?) throws(JobError) -> Output {
        let (phase, output) = JobGraph.lock.withLock { (machine.phase, read()) }
        switch phase {
        case .finished(let finished):
            if case .cancelled(let reason) = finished.outcome { throw .cancelled(job: description, reason: reason) }
            guard let output else { throw .notFinished(job: description) }
            return output
        case .idle, .waiting, .ready, .executing:
            throw .notFinished(job: description)
        }
    }
}

// All mutable scheduling state is in `machine`, guarded by JobGraph.lock; subclasses guard
// their own state (the kinds in this module use the same lock).
extension Job: @unchecked Sendable {}
