import CBatonPlatform

/// The lock diagnostics for ``AsyncLock``: what the sync locks keep per thread, kept per task.
///
/// A task can move between threads at every `await`, so the locks it holds are a task-local
/// stack, pushed around each critical section while the lock-order check is on. Child tasks
/// inherit it, which is right: a child runs inside its parent's critical sections.
enum AsyncLockTracking {
    /// The async locks the current task holds, in the order taken.
    @TaskLocal static var held: [ThreadLockState.Held] = []

    /// Records "each held lock, then `id`" in the process's lock-order graph and reports any
    /// cycle this closes, before the task waits.
    static func checkOrder(_ id: ObjectIdentifier, _ identity: LockIdentity, file: StaticString, line: UInt) {
        let held = held
        guard !held.isEmpty else { return }
        var inversions: [LockOrderInversion] = []
        for lock in held where lock.id != id {
            if let inversion = LockOrderGraph.shared.record(
                held: lock, acquiring: id, identity, at: SourceSite(file, line))
            {
                inversions.append(inversion)
            }
        }
        for inversion in inversions { LockDiagnostics.report(.lockOrderInversion(inversion)) }
    }

    /// The task-local stack with `id` pushed: the value to run its critical section with.
    static func pushing(
        _ id: ObjectIdentifier, _ identity: LockIdentity, file: StaticString, line: UInt
    ) -> [ThreadLockState.Held] {
        baton_lock_diagnostics_mark_used()
        return held + [.init(id: id, identity: identity, mode: .exclusive, file: file, line: line, since: nil)]
    }

    /// Reports a critical section that held the lock longer than the threshold, after release.
    static func reportHold(_ identity: LockIdentity, since: ContinuousClock.Instant, file: StaticString, line: UInt) {
        let duration = ContinuousClock.now - since
        guard let threshold = LockDiagnostics.holdTimeThreshold, duration > threshold else { return }
        LockDiagnostics.report(
            .longHold(
                LongLockHold(
                    lock: identity.description, takenAt: SourceSite(file, line), duration: duration,
                    threshold: threshold)))
    }
}
