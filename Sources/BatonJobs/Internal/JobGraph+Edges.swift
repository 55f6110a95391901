import BatonLocks

/// Adding and removing edges, and a priority raised along them; under ``JobGraph/lock``.
extension JobGraph {
    /// Adds the edge `job` waits for `dependency`, after checking it closes no cycle; one step
    /// under the lock, so two threads adding A→B and B→A cannot both succeed.
    static func addDependencyLocked(_ job: Job, _ dependency: Job, _ fx: inout JobEffects) throws(JobError) {
        switch job.machine.phase {
        case .executing: throw .alreadyExecuting(job: job.description)
        case .finished: throw .alreadyFinished(job: job.description)
        case .idle, .waiting, .ready: break
        }
        if let outcome = dependency.machine.finalOutcome {
            // Already satisfied: kept only so the job can read the result. A job that is not
            // linked applies the failure policy when it is.
            job.machine.dependencies.append(dependency)
            if job.machine.linked, applyFailurePolicyLocked(job, dependency, outcome),
                job.machine.queueReference != nil
            {
                finishLocked(job, .cancelled(job.machine.cancellation!), &fx)
            }
            return
        }
        if let cycle = cycleLocked(adding: job, dependsOn: dependency) {
            throw .dependencyCycle(cycle: cycle.map(\.description))
        }
        job.machine.dependencies.append(dependency)
        dependency.machine.hasDependents = true
        defer { raisePriorityLocked(dependency, to: job.machine.effectivePriority) }
        guard job.machine.linked else { return }
        if job.machine.queueReference != nil {
            dependency.machine.dependents.append(job)
        } else {
            dependency.machine.makeExtras().watchers.append(WeakJob(job: job))
        }
        job.machine.unfinishedDependencies += 1
        if job.machine.unfinishedDependencies == 1 {
            if case .ready = job.machine.phase, let queue = job.machine.queueReference {
                // Its FIFO entry is now stale and skipped.
                queue._withUnsafeGuaranteedRef { $0.machine.readyCount -= 1 }
                job.machine.phase = .waiting
            }
            if job.machine.emit(.pending) { fx.deliver.append(job) }
        }
    }

    /// Removes every edge `job` waits for `dependency`; a job whose last unfinished dependency
    /// goes becomes ready.
    static func removeDependencyLocked(_ job: Job, _ dependency: Job, _ fx: inout JobEffects) {
        guard !job.machine.isStarted else { return }
        let before = job.machine.dependencies.count
        job.machine.dependencies.removeAll { $0 === dependency }
        let removed = before - job.machine.dependencies.count
        guard removed > 0, !dependency.machine.finalized, job.machine.linked else { return }
        if job.machine.queueReference != nil {
            dependency.machine.dependents.removeAll { $0 === job }
        } else {
            dependency.machine.extras?.watchers.removeAll { $0.job === job || $0.job == nil }
        }
        job.machine.unfinishedDependencies -= Int32(removed)
        guard job.machine.unfinishedDependencies == 0 else { return }
        switch job.machine.phase {
        case .waiting: makeReadyLocked(job, emit: true, &fx)
        case .idle: if job.machine.emit(.ready) { fx.deliver.append(job) }
        case .ready, .executing, .finished: break
        }
    }

    /// Raises `job` and its unfinished dependencies, transitively, to at least `priority`. Each
    /// job's inherited priority only ever rises, so the total work is bounded by the edges
    /// times the number of levels.
    static func raisePriorityLocked(_ job: Job, to priority: JobPriority) {
        guard job.machine.effectivePriority < priority, !job.machine.isStarted else { return }
        var work = [job]
        while let next = work.popLast() {
            guard next.machine.effectivePriority < priority, !next.machine.isStarted else { continue }
            next.machine.inheritedPriority = priority
            if case .ready = next.machine.phase, let queue = next.machine.queueReference {
                // The entry at the old level goes stale and is skipped when popped.
                next.machine.phase = .ready(priority)
                queue._withUnsafeGuaranteedRef { $0.machine.ready[priority.rawValue].append(next) }
            }
            for index in 0..<next.machine.dependencies.count {
                let dependency = next.machine.dependencies[index]
                guard !dependency.machine.isFinished else { continue }
                work.append(dependency)
            }
        }
    }

    /// The cycle that the edge `job` → `dependency` would close, or nil.
    ///
    /// The edge closes a cycle exactly when `dependency` already waits, transitively, for
    /// `job`: a depth-first search from `dependency` along what it waits for answers that.
    /// Building a graph in the usual order (a new job gets its dependencies before anything
    /// depends on it), or back to front (a job gets dependents before its own dependencies),
    /// skips the search. Finished jobs are skipped: they have dropped their edges and cannot be
    /// on a cycle.
    ///
    /// - Returns: The jobs on the cycle, starting with `job`, then `dependency`, each waiting
    ///   for the next, the last waiting for `job`.
    private static func cycleLocked(adding job: Job, dependsOn dependency: Job) -> [Job]? {
        guard job.machine.hasDependents, !dependency.machine.dependencies.isEmpty else { return nil }
        // Each job reached, with the job it was reached from (none for `dependency`). The jobs
        // stay alive during the search: the dependency edges hold them.
        var reachedFrom: [ObjectIdentifier: Job?] = [ObjectIdentifier(dependency): nil]
        var stack = [dependency]
        while let waiting = stack.popLast() {
            for index in 0..<waiting.machine.dependencies.count {
                let next = waiting.machine.dependencies[index]
                guard !next.machine.isFinished else { continue }
                if next === job {
                    var path: [Job] = []
                    var step: Job? = waiting
                    while let current = step {
                        path.append(current)
                        step = reachedFrom[ObjectIdentifier(current)] ?? nil
                    }
                    return [job] + path.reversed()
                }
                if reachedFrom[ObjectIdentifier(next)] == nil {
                    reachedFrom[ObjectIdentifier(next)] = .some(waiting)
                    stack.append(next)
                }
            }
        }
        return nil
    }
}
