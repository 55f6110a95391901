import BatonLocks

// Graceful shutdown: the queue stops taking jobs, gives the running ones a grace period, cancels
// the rest, and returns once every job has finished.
extension JobQueue {
    /// Shuts the queue down: it takes no more jobs, lets the running ones finish within
    /// `gracePeriod`, cancels what is left, and returns when every job has finished.
    ///
    /// ```swift
    /// await queue.shutDown(gracePeriod: .seconds(30))  // on SIGTERM
    /// ```
    ///
    /// What happens to each job, in order:
    /// 1. **New jobs are refused at once.** ``add(_:)-(Job)`` throws
    ///    ``JobError/queueShutDown(job:queue:)`` and leaves the job as it was;
    ///    ``addJob(priority:_:)`` returns a job that has finished, cancelled, without running.
    /// 2. **Jobs that have not started** (waiting for dependencies, or ready) finish cancelled at
    ///    once, with ``JobCancellationReason/requested``; their dependents follow their
    ///    ``DependencyFailurePolicy``. With `finishingQueuedJobs`, they are left to start as
    ///    usual during the grace period instead (a suspended queue starts none).
    /// 3. **Running jobs run on.** If any job is unfinished when `gracePeriod` has passed on
    ///    `clock`, every unfinished job is cancelled as by ``cancelAll()``: those not started
    ///    finish cancelled at once, running ones see ``Job/isCancelled`` (an ``AsyncJob``'s task
    ///    is cancelled).
    /// 4. **It returns when the queue has no unfinished job**: every job added before has
    ///    finished exactly once and its completion handler has run.
    ///
    /// Cancelling the task that awaits this ends the grace period at once (step 3); the call
    /// still returns only when every job has finished. A running job that ignores its
    /// cancellation therefore keeps this call waiting: a job is never abandoned while it runs.
    ///
    /// Calling it again, or concurrently, waits in the same way; whichever grace period ends
    /// first cancels what is left. ``isShutDown`` stays true: a queue that has shut down does
    /// not start again.
    ///
    /// - Parameters:
    ///   - gracePeriod: How long running jobs (and, with `finishingQueuedJobs`, queued ones)
    ///     have before they are cancelled.
    ///   - clock: The clock the grace period runs on; a manual clock in tests.
    ///   - finishingQueuedJobs: Whether jobs that have not started may still start during the
    ///     grace period, rather than being cancelled at once.
    public func shutDown<C: Clock>(gracePeriod: C.Duration, clock: C, finishingQueuedJobs: Bool = false) async {
        let deadline = clock.now.advanced(by: gracePeriod)
        let emptied = AsyncSemaphore(value: 0)
        var fx = JobEffects()
        let empty: Bool = JobGraph.lock.withLock {
            if core.beginShutdownLocked(), !finishingQueuedJobs {
                for job in core.machine.members {
                    if case .executing = job.machine.phase { continue }
                    JobGraph.cancelLocked(job, &fx)
                }
                JobGraph.finalizePendingLocked(&fx)
            }
            if core.machine.memberCount == 0 { return true }
            core.machine.waiters.append(.asyncSemaphore(emptied))
            return false
        }
        fx.perform()
        guard !empty else { return }
        do {
            try await emptied.wait(until: deadline, clock: clock)
            return
        } catch {
            // The grace period is over, or the task was cancelled. If the registration is gone,
            // the queue emptied meanwhile and took it, under the lock, to signal it.
            guard JobGraph.lock.withLock({ core.machine.waiters.remove(waitingOn: emptied) }) else { return }
        }
        cancelAll()
        await allJobsFinished()
    }

    /// Shuts the queue down with a grace period on `ContinuousClock`: see
    /// ``shutDown(gracePeriod:clock:finishingQueuedJobs:)``.
    public func shutDown(gracePeriod: Duration, finishingQueuedJobs: Bool = false) async {
        await shutDown(gracePeriod: gracePeriod, clock: ContinuousClock(), finishingQueuedJobs: finishingQueuedJobs)
    }

    /// Whether ``shutDown(gracePeriod:clock:finishingQueuedJobs:)`` has begun: the queue takes
    /// no more jobs.
    public var isShutDown: Bool {
        JobGraph.lock.withLock { core.machine.shutDown }
    }
}
