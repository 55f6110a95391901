import BatonInternals
import BatonLocks
import Dispatch

/// A serial task executor driven by one thread: jobs enqueued to it wait until the driver picks
/// one, at random by a seeded generator, and runs it. Tasks that prefer it (SE-0417), and the
/// default actors they call, run only here, one job at a time, so the interleaving of their
/// suspension points is a function of the seed.
///
/// What it cannot order: jobs of actors with executors of their own (the main actor, an actor
/// on a custom executor) and of tasks without the preference, and when work done outside (a
/// timer of `Task.sleep`, a callback on another thread) resumes a task here. Those still run,
/// and their results come back here, but when depends on the machine.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
final class SeededTaskExecutor: TaskExecutor, @unchecked Sendable {  // `lock` guards `ready`
    private let lock = Lock()
    private var ready: [UnownedJob] = []
    /// Signalled for each job enqueued, so that the driver can sleep while a task waits for
    /// something outside.
    private let arrived = DispatchSemaphore(value: 0)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        lock.withLock { ready.append(job) }
        arrived.signal()
    }

    /// Runs jobs, each picked at random among those ready, until `isDone` or `deadline`;
    /// whether `isDone` held.
    func drive(using random: inout SeededGenerator, until deadline: ContinuousClock.Instant, isDone: () -> Bool)
        -> Bool
    {
        while !isDone() {
            let job: UnownedJob? = lock.withLock {
                ready.isEmpty ? nil : ready.swapRemoveAt(Int.random(in: 0..<ready.count, using: &random))
            }
            if let job {
                job.runSynchronously(on: asUnownedTaskExecutor())
                continue
            }
            let left = deadline - ContinuousClock.now
            guard left > .zero, arrived.wait(timeout: .now() + left.dispatchInterval) == .success else {
                return isDone()
            }
        }
        return true
    }
}

extension Array {
    /// Removes the element at `index` by moving the last one into its place: O(1), order lost.
    fileprivate mutating func swapRemoveAt(_ index: Int) -> Element {
        swapAt(index, count - 1)
        return removeLast()
    }
}
