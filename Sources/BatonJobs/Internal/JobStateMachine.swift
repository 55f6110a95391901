/// The life of one ``Job``: idle (outside a queue) or waiting in one for its dependencies, then
/// ready, executing, and finished exactly once (succeeded, failed or cancelled), then
/// finalized once its observers and completion handler have run; with its dependency edges,
/// its cancellation and its observers.
///
/// A value type whose transitions (in `JobStateMachine+Transitions.swift`) are `mutating`
/// functions that change this job's state and return what must happen next as an action:
/// finish this job, make it ready in its queue, tell its dependents, drain its outbox, wake
/// its waiters. They may read other jobs' state but change neither theirs nor a queue's, and
/// never run user code, wake a thread or start a worker: ``JobGraph`` and ``QueueCore`` carry
/// the actions across the graph under ``JobGraph/lock``, and ``JobEffects`` does the rest after
/// unlock. Every field is guarded by ``JobGraph/lock``.
///
/// Kept to 64 bytes, with what most jobs never need (a cancellation reason, an outcome other
/// than success, observers, waiters) out of line: a job with one closure then fits in two
/// cache lines and in glibc's fast bins (requests up to 120 bytes), which a worker frees to
/// without the allocator's lock, so the thread adding jobs contends with it less.
struct JobStateMachine {
    /// Where the job is, as the scheduler sees it.
    enum Phase {
        /// Not in a queue, not started.
        case idle
        /// In a queue, waiting for dependencies.
        case waiting
        /// In a queue's ready FIFO of this priority level.
        case ready(JobPriority)
        /// The body is running.
        case executing
        /// Done: set exactly once, under the lock.
        case finished(FinishedOutcome)
    }

    // The fields, in this order so that the small ones fill the bytes after the phase (nine
    // bytes) up to the first pointer: 64 bytes in all.

    var phase = Phase.idle
    var flags = Flags()
    /// ``ownPriority`` in the low four bits, ``inheritedPriority`` in the high four.
    private var priorities: UInt8
    var qualityOfService: JobQualityOfService?
    /// Dependencies that have not finished; the job is ready at zero. Exact only while the job
    /// is `linked`; read ``unfinishedCount`` instead.
    var unfinishedDependencies: Int32 = 0
    /// Strong references: a job keeps its dependencies (and their results) until it finishes.
    var dependencies = JobList()
    /// The jobs in a queue that wait for this one, held strongly until this job finishes: what
    /// keeps a waiting job alive (its queue's member list holds no retain), and strong links keep
    /// the side tables that weak references need off the hot path. A job outside any queue is
    /// not listed: two such jobs joined by an edge would otherwise keep each other alive after
    /// their owner lets go of both.
    var dependents = JobList()

    /// The queue that owns the job, from `add` until the job is finalized. Not retained: a
    /// queue with members keeps itself alive (see ``QueueCore/enqueueLocked(_:_:)``), and
    /// retaining it for every job would make the thread adding jobs and the workers finishing
    /// them contend on its reference count. The scheduling paths borrow it with
    /// `_withUnsafeGuaranteedRef`: a strong copy (what `if let` on an `unowned(unsafe)`
    /// reference makes) is that same retain and release, twice per job.
    var queueReference: Unmanaged<QueueCore>?

    /// The owning queue as a strong reference, for the paths off the hot one (error messages).
    var queue: QueueCore? { queueReference?.takeUnretainedValue() }
    /// The neighbours in the queue's member list (see ``QueueStateMachine/join(_:)``), which
    /// holds no retain. While the job is in its queue's inbox (`inInbox`), `nextMember` is the
    /// job below it on the inbox stack.
    var previousMember: Unmanaged<Job>?
    var nextMember: Unmanaged<Job>?

    /// Observers, waiters, a completion handler, watchers, a cancellation reason: nil until
    /// the job has one of them.
    var extras: Extras?

    init(priority: JobPriority) {
        priorities = UInt8(priority.rawValue) | UInt8(JobPriority.veryLow.rawValue) << 4
    }

    var ownPriority: JobPriority {
        @inline(__always) get { JobPriority(rawValue: Int(priorities & 0x0F))! }
        @inline(__always) set { priorities = priorities & 0xF0 | UInt8(newValue.rawValue) }
    }

    /// The highest priority of a job waiting for this one (raised, never lowered).
    var inheritedPriority: JobPriority {
        @inline(__always) get { JobPriority(rawValue: Int(priorities >> 4))! }
        @inline(__always) set { priorities = priorities & 0x0F | UInt8(newValue.rawValue) << 4 }
    }

    /// Whether the job's unfinished dependencies list it (in `dependents` or
    /// ``Extras/watchers``) and `unfinishedDependencies` is exact. A job becomes linked when it
    /// is added to a queue, started, or observed; until then its dependencies do not know it,
    /// and its state is counted from them when asked.
    var linked: Bool {
        @inline(__always) get { flags[Flags.linked] }
        @inline(__always) set { flags[Flags.linked] = newValue }
    }

    /// Whether some job has ever depended on this one. While false, no edge from this job can
    /// close a cycle, and the cycle check is skipped.
    var hasDependents: Bool {
        @inline(__always) get { flags[Flags.hasDependents] }
        @inline(__always) set { flags[Flags.hasDependents] = newValue }
    }

    /// The job reached `.executing`: its runner releases its body, not the finalizer.
    var ran: Bool {
        @inline(__always) get { flags[Flags.ran] }
        @inline(__always) set { flags[Flags.ran] = newValue }
    }

    /// Completion ran and dependents were released: `waitUntilFinished` may return.
    var finalized: Bool {
        @inline(__always) get { flags[Flags.finalized] }
        @inline(__always) set { flags[Flags.finalized] = newValue }
    }

    /// The job is in its queue's inbox (see ``QueueCore``): ready, but not yet among the queue's
    /// members and ready FIFOs. Set by the thread that adds it before anyone else can see it;
    /// cleared under the lock when the queue takes it in.
    var inInbox: Bool {
        @inline(__always) get { flags[Flags.inInbox] }
        @inline(__always) set { flags[Flags.inInbox] = newValue }
    }

    /// Set on each job of a batch while `JobQueue.add` checks it for duplicates, and cleared
    /// before the lock is released.
    var marked: Bool {
        @inline(__always) get { flags[Flags.marked] }
        @inline(__always) set { flags[Flags.marked] = newValue }
    }

    var failurePolicy: DependencyFailurePolicy {
        @inline(__always) get { flags[Flags.runsDespiteFailures] ? .run : .cancel }
        @inline(__always) set { flags[Flags.runsDespiteFailures] = newValue == .run }
    }

    /// Non-nil once the job is cancelled, by request or through a dependency. Kept in the
    /// extras: most jobs are never cancelled.
    var cancellation: JobCancellationReason? {
        @inline(__always) get { extras?.cancellation }
        @inline(__always) set {
            if let newValue {
                makeExtras().cancellation = newValue
            } else {
                extras?.cancellation = nil
            }
        }
    }

    var effectivePriority: JobPriority {
        // Always inlined, here and below: a call would copy the whole state out of the job.
        @inline(__always) get { max(ownPriority, inheritedPriority) }
    }

    var isIdle: Bool {
        @inline(__always) get {
            if case .idle = phase { return true }
            return false
        }
    }

    var isFinished: Bool {
        @inline(__always) get {
            if case .finished = phase { return true }
            return false
        }
    }

    var isStarted: Bool {
        @inline(__always) get {
            switch phase {
            case .executing, .finished: true
            case .idle, .waiting, .ready: false
            }
        }
    }

    /// How the job finished, once it is finalized: its observers and completion handler have
    /// run and its dependents have been told. A dependent counts a dependency as done only from
    /// then on (not from `.finished`), so that it never starts before that completion handler
    /// has returned, and so that it is told exactly once.
    var finalOutcome: JobOutcome? {
        guard finalized, case .finished(let finished) = phase else { return nil }
        return finished.outcome
    }

    /// Dependencies that are not done: kept while the job is linked, counted otherwise.
    var unfinishedCount: Int {
        linked ? Int(unfinishedDependencies) : dependencies.count { !$0.machine.finalized }
    }

    /// The reason the job is cancelled, if it is; for a job that is not linked yet, including
    /// the reason a dependency that failed or was cancelled will give it when it is linked.
    var effectiveCancellation: JobCancellationReason? {
        if let cancellation { return cancellation }
        guard !linked, failurePolicy == .cancel else { return nil }
        for index in 0..<dependencies.count {
            let dependency = dependencies[index]
            if let outcome = dependency.machine.finalOutcome,
                let reason = JobStateMachine.cancellationReason(dependency, outcome)
            {
                return reason
            }
        }
        return nil
    }

    /// The public view of `phase`.
    var state: JobState {
        switch phase {
        case .idle: unfinishedCount > 0 ? .pending : .ready
        case .waiting: .pending
        case .ready: .ready
        case .executing: .executing
        case .finished(let finished): .finished(finished.outcome)
        }
    }
}
