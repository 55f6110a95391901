#if Metrics
import BatonLocks

extension MetricsReporter {
    /// Samples a job queue, with a `queue` dimension holding `name`:
    ///
    /// | metric | kind | what |
    /// |---|---|---|
    /// | `baton_queue_jobs_added_total` | counter | jobs added to the queue |
    /// | `baton_queue_jobs_finished_total{outcome}` | counter | jobs that ended and left the queue: `outcome` is `succeeded`, `failed` or `cancelled` |
    /// | `baton_queue_jobs_running` | gauge | jobs started and not yet ended |
    /// | `baton_queue_jobs_waiting` | gauge | jobs in the queue not running: waiting for a dependency or a free slot |
    /// | `baton_queue_waiting_seconds_total` | counter | the time jobs have spent waiting, summed over jobs |
    /// | `baton_queue_running_seconds_total` | counter | the time jobs have spent running, summed over jobs |
    ///
    /// The queue counts jobs whether or not it is watched, with a plain add under the lock that
    /// adding, starting and ending a job takes anyway. The two times are kept only from the
    /// moment the queue is watched: they take a clock read each time a job joins, starts or
    /// leaves the queue (about 25 ns on Linux). A job is running from the moment a worker takes
    /// it until it has left the queue, its completion handler included; a job added while every
    /// slot is busy joins the queue (and is counted) when a worker next looks for work.
    /// The mean wait of a job is `rate(baton_queue_waiting_seconds_total)` over
    /// `rate(baton_queue_jobs_finished_total)`.
    ///
    /// - Precondition: no other queue is watched under `name`.
    public func watch(_ queue: JobQueue, name: String) {
        queue.timesJobs()
        watch(kind: "queue", name: name) { [weak queue] sample in
            guard let counts = queue?.counts else { return false }
            let queueName = ("queue", name)
            sample.count("baton_queue_jobs_added_total", [queueName], counts.added)
            sample.count("baton_queue_jobs_finished_total", [queueName, ("outcome", "succeeded")], counts.succeeded)
            sample.count("baton_queue_jobs_finished_total", [queueName, ("outcome", "failed")], counts.failed)
            sample.count("baton_queue_jobs_finished_total", [queueName, ("outcome", "cancelled")], counts.cancelled)
            sample.gauge("baton_queue_jobs_running", [queueName], counts.running)
            sample.gauge("baton_queue_jobs_waiting", [queueName], counts.waiting)
            sample.seconds("baton_queue_waiting_seconds_total", [queueName], counts.waitingTime)
            sample.seconds("baton_queue_running_seconds_total", [queueName], counts.runningTime)
            return true
        }
    }
}
#endif
