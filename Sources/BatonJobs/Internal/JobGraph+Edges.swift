import BatonLocks

/// Adding and removing edges, and a priority raised along them, under ``JobGraph/lock``: the
/// ``JobStateMachine`` transitions of the job at one end, carried to the other.
extension JobGraph {
    /// Adds the edge `job` waits for `dependency`, after checking it closes no cycle; one step
    /// under the lock, so two threads adding A→B and B→A cannot both succeed.
    static func addDependencyLocked(_ job: Job, _ dependency: Job, _ fx: inout JobEffects) throws(JobError) {
        switch job.machine.addDependency(dependency) {
        case .refused(.executing): throw .alreadyExecuting(job: job.description)
        case .refused(.finished): throw .alreadyFinished(job: job.description)
        case .kept: return
        case .finishCancelled(let reason):
            finishLocked(job, .cancelled(reason), &fx)
            return
        case .checkCycle: break
        }
        if let cycle = cycleLocked(adding: job, dependsOn: dependency) {
            throw .dependencyCycle(cycle: cycle.map(\.description))
        }
        dependency.machine.hasDependents = true
        defer { raisePriorityLocked(dependency, to: job.machine.effectivePriority) }
        guard case .list(let strongly, let leftReady, let observers) = job.machine.addUnfinishedDependency(dependency)
        else { return }
        dependency.machine.listDependent(job, strongly: strongly)
        if leftReady, let queue = job.machine.queueReference {
            queue._withUnsafeGuaranteedRef { $0.machine.readyCount -= 1 }
        }
        if case .drainOutbox = observers { fx.deliver.append(job) }
    }

    /// Removes every edge `job` waits for `dependency`; a job whose last unfinished dependency
    /// goes becomes ready.
    static func removeDependencyLocked(_ job: Job, _ dependency: Job, _ fx: inout JobEffects) {
        guard case .unlist(let strongly, let then) = job.machine.removeDependency(dependency) else { return }
        dependency.machine.unlistDependent(job, strongly: strongly)
        switch then {
        case .makeReady: makeReadyLocked(job, emit: true, &fx)
        case .drainOutbox: fx.deliver.append(job)
        case .none, .finishCancelled: break
        }
    }

    /// Raises `job` and its unfinished dependencies, transitively, to at least `priority`
    /// (``JobStateMachine/inherit(_:)``). Each job's inherited priority only ever rises, so the
    /// total work is bounded by the edges times the number of levels.
    static func raisePriorityLocked(_ job: Job, to priority: JobPriority) {
        guard job.machine.effectivePriority < priority, !job.machine.isStarted else { return }
        var work = [job]
        while let next = work.popLast() {
            switch next.machine.inherit(priority) {
            case .unchanged: continue
            case .raised: break
            case .requeue(let level):
                next.machine.queueReference?._withUnsafeGuaranteedRef { $0.machine.ready[level.rawValue].append(next) }
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
