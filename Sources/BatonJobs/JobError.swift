/// A misuse of a job or queue, reported as an error at the call that made it instead of a hang
/// or a crash later.
///
/// Jobs are named in the error by their ``Job/description``: the ``Job/name`` given at init, or
/// the type and address.
///
/// Thread safety: a value type; `Sendable`.
public enum JobError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `job.addDependency(job)`.
    case selfDependency(job: String)
    /// The dependency would close a cycle. `cycle` lists the jobs on it in waiting order:
    /// each waits for the next, and the last waits for the first. The first is the job
    /// `addDependency` was called on, the second the dependency passed in.
    case dependencyCycle(cycle: [String])
    /// The job has been added to a queue already (this one or another).
    case alreadyAdded(job: String, queue: String)
    /// The job has finished; it cannot be added, started or given dependencies.
    case alreadyFinished(job: String)
    /// The job is executing; it cannot be added, started again or given dependencies.
    case alreadyExecuting(job: String)
    /// `start()` on a job some of whose dependencies have not finished.
    case notReady(job: String, unfinishedDependencies: Int)
    /// `start()` on a job that a queue owns: the queue starts it.
    case ownedByQueue(job: String, queue: String)
    /// The result of a job that was cancelled was read.
    case cancelled(job: String, reason: String)
    /// The result of a job that has not finished was read.
    case notFinished(job: String)

    public var description: String {
        switch self {
        case .selfDependency(let job):
            "\(job) cannot depend on itself"
        case .dependencyCycle(let cycle):
            "adding this dependency would close the cycle \((cycle + cycle.prefix(1)).joined(separator: " → "))"
        case .alreadyAdded(let job, let queue):
            "\(job) has already been added to queue \(queue)"
        case .alreadyFinished(let job):
            "\(job) has already finished"
        case .alreadyExecuting(let job):
            "\(job) is already executing"
        case .notReady(let job, let count):
            "\(job) is not ready: \(count) of its dependencies have not finished"
        case .ownedByQueue(let job, let queue):
            "\(job) belongs to queue \(queue), which starts it; start() is for jobs outside a queue"
        case .cancelled(let job, let reason):
            "\(job) was cancelled (\(reason)) and has no result"
        case .notFinished(let job):
            "\(job) has not finished, so it has no result yet"
        }
    }
}
