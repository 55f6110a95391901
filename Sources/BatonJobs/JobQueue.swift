import BatonInternals
import BatonLocks
import Dispatch

/// Runs jobs as their dependencies allow, highest priority first, at most
/// `maxConcurrentJobs` at a time: the `OperationQueue` of Baton.
///
/// ```swift
/// let queue = JobQueue(name: "images", maxConcurrentJobs: 4)
/// let decode = ResultJob { try decodeImage(data) }
/// let resize = ResultJob { try resizeImage(decode.result.get()) }
/// try resize.addDependency(decode)
/// try queue.add([decode, resize])
/// queue.addJob(priority: .low) { purgeOldThumbnails() }
/// await queue.allJobsFinished()
/// ```
///
/// `maxConcurrentJobs: 1` makes a serial queue, in which priority and dependencies still
/// decide the order. Jobs run on Dispatch's global threads at the queue's (or the job's)
/// quality of service; the queue owns no thread and starts a worker only while fewer than
/// `maxConcurrentJobs` jobs run, each worker running ready jobs one after another.
///
/// Scheduling is linear in jobs plus edges: a job counts its unfinished dependencies, and a
/// finishing job decrements its dependents' counts.
///
/// Thread safety: every member may be used from any thread. A queue stays alive while it has
/// unfinished jobs, even when no one else refers to it.
///
/// - Warning: A suspended queue, or one holding a job that waits for a job nobody runs, never
///   empties: ``waitUntilAllJobsAreFinished()`` then waits forever
///   (``waitUntilAllJobsAreFinished(timeout:)`` gives up at its timeout).
public final class JobQueue: Sendable {
    /// The name used in errors and descriptions.
    public let name: String
    /// How many jobs may run at once.
    public let maxConcurrentJobs: Int
    /// The thread priority jobs run at unless they set their own.
    public let qualityOfService: JobQualityOfService
    let core: QueueCore

    /// How many jobs a queue runs at once unless told otherwise: the processors this process can
    /// run on, read once per process (on Linux the thread's CPU affinity mask, bounded by a cgroup
    /// CPU quota rounded up, so a container limited to 2 CPUs gets 2 however many the host has).
    public static var defaultMaxConcurrentJobs: Int { ProcessorCount.active }

    /// Creates a queue.
    ///
    /// - Parameters:
    ///   - name: The queue's name in errors and descriptions.
    ///   - maxConcurrentJobs: How many jobs may run at once; 1 makes a serial queue. By default
    ///     ``defaultMaxConcurrentJobs``, one per processor.
    ///   - qualityOfService: The thread priority of its workers.
    /// - Precondition: `maxConcurrentJobs` is at least 1.
    public init(
        name: String,
        maxConcurrentJobs: Int = JobQueue.defaultMaxConcurrentJobs,
        qualityOfService: JobQualityOfService = .default
    ) {
        precondition(
            maxConcurrentJobs >= 1, "JobQueue \(name): maxConcurrentJobs must be at least 1, not \(maxConcurrentJobs)")
        self.name = name
        self.maxConcurrentJobs = maxConcurrentJobs
        self.qualityOfService = qualityOfService
        core = QueueCore(
            name: name, maxConcurrentJobs: maxConcurrentJobs, qualityOfService: qualityOfService, target: nil)
        core.owner = self  // no other thread can see the core yet
    }

    /// Creates a queue whose jobs run on `target`: the analogue of `OperationQueue`'s
    /// `underlyingQueue`.
    ///
    /// ```swift
    /// let database = DispatchQueue(label: "database")
    /// let writes = JobQueue(name: "writes", maxConcurrentJobs: 4, target: database)
    /// ```
    ///
    /// Each job that starts is one work item on `target`, so `target`'s other work runs between
    /// the queue's jobs, and a serial target runs one job at a time whatever
    /// `maxConcurrentJobs` says. Priorities, dependencies and `maxConcurrentJobs` decide which
    /// jobs are handed to `target` and when, as on any queue; `target` decides the threads, so
    /// `qualityOfService` (the queue's and the jobs') does not apply. An ``AsyncJob``'s body is
    /// started from `target` and runs as a task on Swift's executors. With `target: .main`
    /// (or ``main``) jobs run on the main queue, and ``addMainActorJob(priority:_:)`` takes
    /// `@MainActor` bodies.
    ///
    /// - Parameters:
    ///   - name: The queue's name in errors and descriptions.
    ///   - maxConcurrentJobs: How many jobs may be on `target` at once.
    ///   - target: The Dispatch queue the jobs run on.
    /// - Precondition: `maxConcurrentJobs` is at least 1.
    /// - Warning: Waiting for the queue's jobs from the target itself (say,
    ///   ``waitUntilAllJobsAreFinished()`` on the main thread for a queue on the main queue)
    ///   waits forever: the jobs cannot start while the target is blocked.
    public init(name: String, maxConcurrentJobs: Int = JobQueue.defaultMaxConcurrentJobs, target: DispatchQueue) {
        precondition(
            maxConcurrentJobs >= 1, "JobQueue \(name): maxConcurrentJobs must be at least 1, not \(maxConcurrentJobs)")
        self.name = name
        self.maxConcurrentJobs = maxConcurrentJobs
        qualityOfService = .default
        core = QueueCore(
            name: name, maxConcurrentJobs: maxConcurrentJobs, qualityOfService: .default, target: target)
        core.owner = self  // no other thread can see the core yet
    }

    /// A serial queue whose jobs run on the main queue, one at a time, each one work item: the
    /// analogue of `OperationQueue.main`, for work that must run on the main thread.
    ///
    /// ```swift
    /// let render = ResultJob { try renderThumbnail(data) }
    /// try background.add(render)
    /// let thumbnail = try await render.value
    /// JobQueue.main.addMainActorJob { imageView.image = thumbnail }
    /// ```
    ///
    /// To make a job of the main queue wait for jobs of other queues, add its dependencies
    /// before adding it: make it a ``BlockJob`` whose body calls `MainActor.assumeIsolated`,
    /// add the dependencies, then add it with ``add(_:)-(Job)``.
    ///
    /// Its jobs run only while the main queue is served: by the app's run loop, by
    /// `dispatchMain()`, or by Swift's main actor in an `async` `main`.
    public static let main = JobQueue(name: "main", maxConcurrentJobs: 1, target: .main)

    /// The Dispatch queue the jobs run on, if the queue was made with one (see
    /// ``init(name:maxConcurrentJobs:target:)``); `nil` for Dispatch's global queues.
    public var target: DispatchQueue? { core.target }

    /// A queue for `core`, whose first queue nobody holds any more (see ``current``).
    private init(core: QueueCore) {
        name = core.name
        maxConcurrentJobs = core.maxConcurrentJobs
        qualityOfService = core.qualityOfService
        self.core = core
    }

    /// The queue running the calling code's job, or `nil` when the caller is not a job's body:
    /// the analogue of `OperationQueue.current`.
    ///
    /// ```swift
    /// queue.addJob {
    ///     precondition(JobQueue.current === queue)
    ///     JobQueue.current?.addJob { followUp() }  // more work on the same queue
    /// }
    /// ```
    ///
    /// It is set in every job body a queue runs: a closure job's, a ``Job`` subclass's `main()`,
    /// each block of a ``BlockJob`` (on whichever thread runs it), and the whole async body of an
    /// ``AsyncJob`` (across its suspensions, and in the tasks it starts, which inherit it as they
    /// inherit every task-local value, except a `Task.detached`). A `Task { }` started from a
    /// synchronous body runs on its own and sees `nil`, as does any code a queue does not run,
    /// including a thread the queue's worker used before. A job's completion handler runs on the thread that
    /// finished the job, which may or may not be its queue's worker: do not rely on `current`
    /// there.
    ///
    /// It is the very queue the job was added to (`===`) as long as anyone holds that queue;
    /// when nobody does, and its jobs run on, it is a new `JobQueue` for the same jobs, with the
    /// same name and limits, and the same one for every caller from then on.
    public static var current: JobQueue? {
        let core: QueueCore
        if let word = runningQueueSlot.word {
            core = Unmanaged<QueueCore>.fromOpaque(word).takeUnretainedValue()
        } else if let running = runningAsyncJobQueue {
            core = running
        } else {
            return nil
        }
        return JobGraph.lock.withLock {
            if let owner = core.owner { return owner }
            let queue = JobQueue(core: core)
            core.owner = queue
            return queue
        }
    }

    /// The queue of the `AsyncJob` whose body the current task runs, if any.
    @TaskLocal static var runningAsyncJobQueue: QueueCore?

    /// Adds a job; it starts once its dependencies have finished and a slot is free. A job that
    /// was cancelled before finishes at once, as cancelled.
    ///
    /// - Throws: ``JobError/alreadyAdded(job:queue:)`` when the job is in a queue already,
    ///   ``JobError/alreadyExecuting(job:)`` or ``JobError/alreadyFinished(job:)`` when it has
    ///   started, ``JobError/queueShutDown(job:queue:)`` once the queue has begun to shut down
    ///   (``shutDown(gracePeriod:clock:finishingQueuedJobs:)``); the job is then left as it was.
    public func add(_ job: Job) throws(JobError) {
        try add([job])
    }

    /// Adds several jobs in one step: either all are added or, if one cannot be, none is.
    ///
    /// - Complexity: O(n).
    /// - Throws: As ``add(_:)-(Job)``, also when the same job appears twice in `jobs`.
    public func add(_ jobs: [Job]) throws(JobError) {
        var fx = JobEffects()
        try jobs.withUnsafeBufferPointer { buffer throws(JobError) in
            // The jobs are read as unmanaged references, which the array keeps alive: a strong
            // reference read out of the array is retained and released around every use.
            let batch = UnsafeRawBufferPointer(buffer)
            func job(_ index: Int) -> Unmanaged<Job> {
                batch.load(fromByteOffset: index * MemoryLayout<Job>.stride, as: Unmanaged<Job>.self)
            }
            try JobGraph.lock.withLock { () throws(JobError) in
                if core.machine.shutDown, !buffer.isEmpty {
                    throw .queueShutDown(job: job(0)._withUnsafeGuaranteedRef { $0.description }, queue: name)
                }
                // Each job is marked as it is checked, so a second occurrence is seen; the marks
                // are cleared again before anything is added or thrown.
                var refused: JobError?
                var marked = 0
                for index in 0..<buffer.count {
                    if job(index)._withUnsafeGuaranteedRef({ markLocked($0) }) {
                        marked += 1
                    } else {
                        refused = job(index)._withUnsafeGuaranteedRef { refusalLocked($0) }
                        break
                    }
                }
                for index in 0..<marked { job(index)._withUnsafeGuaranteedRef { $0.machine.marked = false } }
                if let refused { throw refused }
                core.admitInboxLocked()  // jobs added before these go first
                for index in 0..<buffer.count { job(index)._withUnsafeGuaranteedRef { core.enqueueLocked($0, &fx) } }
                JobGraph.finalizePendingLocked(&fx)
            }
        }
        fx.perform()
    }

    /// Marks `job` as part of the batch being added, or returns false when it cannot be added
    /// (then ``refusalLocked(_:)`` says why).
    private func markLocked(_ job: Job) -> Bool {
        guard case .idle = job.machine.phase, !job.machine.marked else { return false }
        job.machine.marked = true
        return true
    }

    /// Why `job`, which ``markLocked(_:)`` refused, cannot be added.
    private func refusalLocked(_ job: Job) -> JobError {
        switch job.machine.phase {
        case .executing: .alreadyExecuting(job: job.description)
        case .finished: .alreadyFinished(job: job.description)
        case .waiting, .ready: .alreadyAdded(job: job.description, queue: job.machine.queue?.name ?? name)
        case .idle: .alreadyAdded(job: job.description, queue: name)  // a second time in the batch
        }
    }

    /// Adds a job that runs `body`, and returns it (to add dependencies to it, observe or
    /// cancel it).
    ///
    /// Once the queue has begun to shut down (``shutDown(gracePeriod:clock:finishingQueuedJobs:)``)
    /// the job is refused: it finishes at once, cancelled (``JobCancellationReason/requested``),
    /// and `body` never runs. A job added on another thread just as shutdown begins is either
    /// taken, as a job added before, or refused; never lost.
    ///
    /// - Parameters:
    ///   - priority: Where it goes among the ready jobs.
    ///   - body: The work; if it throws, the job fails with the error.
    @discardableResult
    public func addJob(priority: JobPriority = .normal, _ body: @escaping @Sendable () throws -> Void) -> Job {
        // Typed as Job, not ClosureJob: otherwise the upcast for `submit` retains the job for
        // the call and releases it after.
        let job: Job = ClosureJob(priority: priority, body)
        core.submit(job)
        return job
    }

    /// Adds a job whose body is isolated to the main actor, to a queue whose jobs run on the main
    /// queue (``main``, or one made with `target: .main`), and returns it.
    ///
    /// ```swift
    /// JobQueue.main.addMainActorJob { statusLabel.text = "Done" }
    /// ```
    ///
    /// It behaves as ``addJob(priority:_:)`` in every other way.
    ///
    /// - Precondition: the queue's ``target`` is the main queue: on any other queue the body
    ///   could not run on the main actor.
    @discardableResult
    public func addMainActorJob(
        priority: JobPriority = .normal, _ body: @escaping @MainActor @Sendable () throws -> Void
    ) -> Job {
        precondition(
            core.runsOnMainQueue,
            "JobQueue \(name): a @MainActor job needs a queue whose jobs run on the main queue (JobQueue.main, or one made with target: .main)"
        )
        return addJob(priority: priority) { try MainActor.assumeIsolated { try body() } }
    }

    /// Cancels every job in the queue: those not started finish as cancelled at once, running
    /// ones see ``Job/isCancelled``.
    public func cancelAll() {
        var fx = JobEffects()
        JobGraph.lock.withLock {
            core.admitInboxLocked()
            for job in core.machine.members {
                JobGraph.cancelLocked(job, &fx)
            }
            JobGraph.finalizePendingLocked(&fx)
        }
        fx.perform()
    }

    /// Whether the queue has stopped starting jobs. Jobs already running finish; setting it
    /// back to false starts the ready ones.
    public var isSuspended: Bool {
        get { JobGraph.lock.withLock { core.machine.suspended } }
        set {
            var fx = JobEffects()
            JobGraph.lock.withLock {
                core.admitInboxLocked()
                core.machine.suspended = newValue
                if !newValue { core.requestWorkersLocked(&fx) }
            }
            fx.perform()
        }
    }

    /// The jobs added and not yet finished, in the order the queue took them: the analogue of
    /// `OperationQueue.operations`.
    ///
    /// Jobs added one after another from one thread are listed in that order, whatever their
    /// priorities and dependencies, which decide only the order they run in; a job leaves the
    /// list when it finishes (by running, failing or being cancelled) and its completion handler
    /// has run. It has ``jobCount`` jobs, and is a snapshot: jobs may finish or be added as soon
    /// as it is returned.
    ///
    /// - Complexity: O(n) in the jobs listed.
    public var jobs: [Job] {
        JobGraph.lock.withLock {
            core.admitInboxLocked()
            return core.machine.members
        }
    }

    /// The jobs added and not yet finished (including their completion handlers).
    public var jobCount: Int {
        JobGraph.lock.withLock {
            core.admitInboxLocked()
            return core.machine.memberCount
        }
    }

    /// What the queue has counted so far, its times brought up to now: what `MetricsReporter`
    /// samples.
    var counts: QueueCounts {
        JobGraph.lock.withLock {
            core.admitInboxLocked()
            let waiting = core.machine.memberCount - core.machine.counts.running
            core.machine.counts.advance(waiting: waiting)
            var counts = core.machine.counts
            counts.waiting = waiting
            return counts
        }
    }

    /// From now on, the queue keeps the time its jobs spend waiting and running.
    func timesJobs() {
        JobGraph.lock.withLock {
            core.admitInboxLocked()
            core.machine.counts.timed = true
            core.machine.counts.advance(waiting: core.machine.memberCount - core.machine.counts.running)
        }
    }

    /// Blocks until the queue has no unfinished job: every job added so far has finished and
    /// its completion handler has run.
    ///
    /// - Warning: Waits forever while the queue is suspended with jobs in it. Do not call it
    ///   from a job of this queue.
    @available(*, noasync, message: "blocks the thread; use `await allJobsFinished()`", renamed: "allJobsFinished()")
    public func waitUntilAllJobsAreFinished() {
        let semaphore: DispatchSemaphore? = JobGraph.lock.withLock {
            core.admitInboxLocked()
            if core.machine.memberCount == 0 { return nil }
            let semaphore = DispatchSemaphore(value: 0)
            core.machine.waiters.append(.semaphore(semaphore))
            return semaphore
        }
        semaphore?.wait()
    }

    /// Blocks until the queue has no unfinished job, or until `timeout` has passed; returns
    /// whether the queue emptied.
    ///
    /// The thread sleeps on a semaphore that the queue signals when its last job has finished
    /// and its completion handler has run; nothing polls. A wait that times out takes its
    /// registration back out of the queue, so that giving up leaves nothing behind. A queue that
    /// empties just as the time runs out is reported as emptied: the call returns `true` exactly
    /// when the queue had no unfinished job at some moment between the call and its return
    /// (jobs added since may be running). A zero or negative `timeout` returns at once whether
    /// the queue is empty.
    ///
    /// - Parameter timeout: How long to wait at most.
    /// - Returns: `true` if the queue emptied; `false` if the time ran out first.
    /// - Warning: Do not call it from a job of this queue: the queue cannot empty while that job
    ///   waits, so it always times out.
    @available(*, noasync, message: "blocks the thread; use `await allJobsFinished()`")
    public func waitUntilAllJobsAreFinished(timeout: Duration) -> Bool {
        let semaphore = DispatchSemaphore(value: 0)
        let empty: Bool = JobGraph.lock.withLock {
            core.admitInboxLocked()
            if core.machine.memberCount == 0 { return true }
            if timeout > .zero { core.machine.waiters.append(.semaphore(semaphore)) }
            return false
        }
        guard !empty else { return true }
        guard timeout > .zero else { return false }
        if semaphore.wait(timeout: .now() + timeout.dispatchInterval) == .success { return true }
        // Out of time. If the registration is still there, the queue has not emptied: take it
        // out. If it is gone, the queue emptied and took it, under the same lock, to signal it.
        return !JobGraph.lock.withLock { core.machine.waiters.remove(waitingOn: semaphore) }
    }

    /// Suspends until the queue has no unfinished job. Does not end early when the awaiting
    /// task is cancelled.
    public func allJobsFinished() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = JobGraph.lock.withLock {
                core.admitInboxLocked()
                if core.machine.memberCount == 0 { return true }
                core.machine.waiters.append(.continuation(continuation))
                return false
            }
            if done { continuation.resume() }
        }
    }
}
