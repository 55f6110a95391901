/// What a queue counts for `MetricsReporter`, kept in its state machine under `JobGraph.lock`,
/// which every change it counts holds already: a plain add per job, no atomic.
///
/// The times are the integrals of the counts: the total time jobs spent waiting is the number
/// waiting summed over time, so each change of a count adds the count times the time since the
/// last change. That takes a clock read per change, so it is done only while the queue is
/// watched (`timed`); the integrals start when the watch does.
struct QueueCounts {
    var added = 0
    var succeeded = 0
    var failed = 0
    var cancelled = 0
    /// Jobs a worker has started and that have not yet left the queue.
    var running = 0
    /// Jobs in the queue and not running, in a snapshot (`JobQueue.counts`); not kept up to
    /// date in the state machine, where it is the member count less ``running``.
    var waiting = 0
    /// Whether changes read the clock for the times below.
    var timed = false
    /// The time jobs have spent in the queue not running (waiting for a dependency or a slot).
    var waitingTime = Duration.zero
    /// The time jobs have spent running (their completion handlers included).
    var runningTime = Duration.zero
    private var lastChange: ContinuousClock.Instant?

    /// Adds the time since the last change at the counts before this one: `waiting` jobs
    /// waiting and ``running`` running. Does nothing unless ``timed``.
    @inline(__always)
    mutating func advance(waiting: Int) {
        guard timed else { return }
        advanceTimed(waiting: waiting)
    }

    @inline(never)
    private mutating func advanceTimed(waiting: Int) {
        let now = ContinuousClock.now
        if let lastChange {
            let elapsed = now - lastChange
            waitingTime += elapsed * waiting
            runningTime += elapsed * running
        }
        lastChange = now
    }

    /// A job left the queue with `outcome`.
    mutating func count(_ outcome: JobStateMachine.FinishedOutcome) {
        switch outcome {
        case .succeeded: succeeded += 1
        case .other(let box):
            if case .cancelled = box.outcome { cancelled += 1 } else { failed += 1 }
        }
    }
}
