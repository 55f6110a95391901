/// The scheduling state of one ``JobQueue``: its ready jobs by priority, its members and its
/// worker slots. Every field is guarded by ``JobGraph/lock``.
struct JobQueueStateMachine {
    /// One FIFO per ``JobPriority`` level, indexed by raw value. An entry whose job is no
    /// longer `.ready` at that level (cancelled, raised to another level, given a new
    /// dependency) is stale and skipped when popped.
    var ready: [FIFO<Job>] = Array(repeating: FIFO(), count: JobPriority.allCases.count)
    /// Jobs that are `.ready` in this queue: the live entries of `ready`.
    var readyCount = 0
    /// Jobs added and not yet finalized, each at its `memberIndex`; for `cancelAll` and
    /// `jobCount`, and waking `waitUntilAllJobsAreFinished` when it empties.
    var members: [Job] = []
    /// Slots in use: workers dispatched or running, plus `AsyncJob` bodies in flight.
    var active = 0
    /// Workers that are dispatched or between jobs and about to pop one: a new worker is only
    /// worth starting for ready jobs beyond these.
    var searching = 0
    var suspended = false
    var waiters: [JobWaiter] = []

    mutating func pushReady(_ job: Job, _ level: JobPriority) {
        ready[level.rawValue].append(job)
        readyCount += 1
    }

    /// The highest-priority ready job, first in first out within a level.
    mutating func popReady() -> Job? {
        guard readyCount > 0 else { return nil }
        for level in stride(from: ready.count - 1, through: 0, by: -1) {
            while let job = ready[level].popFirst() {
                if case .ready(let at) = job.machine.phase, at.rawValue == level {
                    readyCount -= 1
                    return job
                }
            }
        }
        return nil
    }
}
