/// How ``AsyncLinearizabilityCheck`` runs a round's tasks.
///
/// Thread safety: a plain value; `Sendable`.
public enum CheckScheduling: Sendable, Hashable {
    /// On one thread, a serial task executor that, at each step, runs one of the ready jobs
    /// chosen by the round's seed: every suspension point (an `await` that suspends, an actor
    /// hop, a `Task.yield()`) is a place where another task may run, and which one does is
    /// explored seed after seed. A failure replays exactly from its seed.
    ///
    /// What it does not control: work on actors with an executor of their own (the main actor,
    /// a custom executor), tasks the operations start without inheriting the preference
    /// (`Task.detached`), and anything that resumes a task from outside (the timer of
    /// `Task.sleep`, a callback on a queue). Those run as usual and their tasks come back to the
    /// executor when the machine lets them, so the order is no longer the seed's alone.
    case deterministic
    /// On Swift concurrency's global executor, several threads at once, as in production: it
    /// finds bugs that need real parallelism (a data race behind `nonisolated` code, a lock
    /// held across an `await`), but a failure does not replay exactly.
    case concurrent
}
