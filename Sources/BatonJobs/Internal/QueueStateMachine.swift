/// The admission half of a job's life, for one ``JobQueue``: its ready jobs by priority, its
/// members and its worker slots, and the decisions that move a job from ready to executing
/// (how many workers to start, which job a worker takes, when a worker gives its slot back).
/// Like ``JobStateMachine``, its transitions only change this state and return what to do;
/// ``QueueCore`` starts the workers and publishes the slot count. Every field is guarded by
/// ``JobGraph/lock``.
struct QueueStateMachine {
    /// One FIFO per ``JobPriority`` level, indexed by raw value. An entry whose job is no
    /// longer `.ready` at that level (cancelled, raised to another level, given a new
    /// dependency) is stale and skipped when popped.
    var ready: [FIFO<Job>] = Array(repeating: FIFO(), count: JobPriority.allCases.count)
    /// Jobs that are `.ready` in this queue: the live entries of `ready`.
    var readyCount = 0
    /// Jobs added and not yet finalized, oldest first, for `cancelAll` and `jobCount`, and
    /// waking `waitUntilAllJobsAreFinished` when it empties: a list threaded through the jobs
    /// (``JobStateMachine/previousMember`` and ``JobStateMachine/nextMember``). Leaving
    /// touches only the job's neighbours, so a worker finishing an old job does not write to the
    /// newest one, which the thread adding jobs has just written (an array with swap-removal
    /// would).
    ///
    /// The list holds no retain (that would be a retain and a release per job): a member is
    /// always held by what it is waiting in. A waiting job is in the `dependents` of each
    /// dependency it waits for, a ready one in its ready FIFO, a running one is held by its
    /// worker (an `AsyncJob` by its task), and a finished one by whoever finalizes it
    /// (`JobEffects.toFinalize`, or the thread delivering its outbox), which still has it when
    /// the job leaves the list.
    private var firstMember: Unmanaged<Job>?
    private var lastMember: Unmanaged<Job>?
    private(set) var memberCount = 0
    /// Slots in use: workers dispatched or running, plus `AsyncJob` bodies in flight.
    var active = 0
    /// Workers that are dispatched or between jobs and about to pop one: a new worker is only
    /// worth starting for ready jobs beyond these.
    var searching = 0
    var suspended = false
    /// ``JobQueue/shutDown(gracePeriod:clock:finishingQueuedJobs:)`` has begun: the queue takes no
    /// more jobs.
    var shutDown = false
    var waiters: [JobWaiter] = []
    /// What `MetricsReporter` samples.
    var counts = QueueCounts()

    /// Appends a job to the members. The list's jobs are borrowed, not bound to strong
    /// references (each of which would be a retain and release).
    mutating func join(_ job: Job) {
        let member = Unmanaged.passUnretained(job)
        let previous = lastMember
        member._withUnsafeGuaranteedRef { job in
            job.machine.previousMember = previous
            job.machine.nextMember = nil
        }
        if let lastMember {
            lastMember._withUnsafeGuaranteedRef { $0.machine.nextMember = member }
        } else {
            firstMember = member
        }
        lastMember = member
        counts.advance(waiting: memberCount - counts.running)
        memberCount += 1
        counts.added += 1
    }

    /// Takes `job` out of the list.
    mutating func leave(_ job: Job, _ outcome: JobStateMachine.FinishedOutcome) {
        counts.advance(waiting: memberCount - counts.running)
        if job.machine.ran { counts.running -= 1 }
        counts.count(outcome)
        let previous = job.machine.previousMember
        let next = job.machine.nextMember
        if let previous {
            previous._withUnsafeGuaranteedRef { $0.machine.nextMember = next }
        } else {
            firstMember = next
        }
        if let next {
            next._withUnsafeGuaranteedRef { $0.machine.previousMember = previous }
        } else {
            lastMember = previous
        }
        job.machine.previousMember = nil
        job.machine.nextMember = nil
        memberCount -= 1
    }

    /// The members, oldest first.
    var members: [Job] {
        var members: [Job] = []
        members.reserveCapacity(memberCount)
        var member = firstMember
        while let current = member?.takeUnretainedValue() {
            members.append(current)
            member = current.machine.nextMember
        }
        return members
    }

    mutating func pushReady(_ job: consuming Job, _ level: JobPriority) {
        ready[level.rawValue].append(job)
        readyCount += 1
    }

    /// The highest-priority ready job, first in first out within a level.
    mutating func popReady() -> Job? {
        guard readyCount > 0 else { return nil }
        for step in 0..<ready.count {
            let level = ready.count - 1 - step  // highest first
            // Read first: popping goes through a mutable access to `ready`, which checks that the
            // array is unique.
            if ready[level].isEmpty { continue }
            while let job = ready[level].popFirst() {
                if case .ready(let at) = job.machine.phase, at.rawValue == level {
                    readyCount -= 1
                    return job
                }
            }
        }
        return nil
    }

    // MARK: Admission

    /// Takes slots for workers for the ready jobs that no worker is about to pick up, within
    /// `limit`, and returns how many workers to start (none while suspended).
    mutating func admitWorkers(limit: Int) -> Int {
        guard !suspended else { return 0 }
        var workers = 0
        while active < limit && readyCount > searching {
            active += 1
            searching += 1
            workers += 1
        }
        return workers
    }

    /// A worker that finished a job looks for its next one: counted as searching before the
    /// finished job releases its dependents, so that no worker is started for the job it takes.
    mutating func startSearching() {
        searching += 1
    }

    /// A searching worker takes the highest-priority ready job, or nil: it gives its slot back
    /// (none is ready, or the queue is suspended).
    mutating func takeNext() -> Job? {
        searching -= 1
        guard !suspended, let job = popReady() else {
            active -= 1
            return nil
        }
        counts.advance(waiting: memberCount - counts.running)
        counts.running += 1
        return job
    }

    /// An `AsyncJob`'s body ended: its slot is free again.
    mutating func releaseSlot() {
        active -= 1
    }
}
