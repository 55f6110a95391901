import Atomics
import BatonLocks
import BatonTesting

/// The `AsyncSemaphore` stress run: many more tasks than permits take and return permits, with
/// awaits inside, while a canceller cancels tasks at random moments.
///
/// During each round no more than `width` tasks may ever hold a permit at once. With every task
/// finished, the permits must be exactly `width` again: `width` waits succeed without anyone
/// signalling (none lost), and one more wait then waits (none made up).
enum AsyncSemaphoreStress {
    static func run(_ options: StressOptions) -> StressResult {
        let session = StressSession(name: "async-semaphore", options: options)
        let width = max(2, options.threads / 2)
        let tasks = options.threads * 4
        let sectionsPerTask = max(1, options.roundOperations / options.threads)
        let semaphore = AsyncSemaphore(value: width)
        var round = 0
        while session.shouldContinue {
            round += 1
            let currentRound = round
            let burst = session.task("async-semaphore round \(round) burst") {
                await burstRound(
                    semaphore, width: width, tasks: tasks, sections: sectionsPerTask, session: session,
                    round: currentRound)
            }
            guard let burst else { break }
            session.countOperations(burst)
            let audited = session.task("async-semaphore round \(round) audit") {
                await audit(semaphore, width: width, session: session, round: currentRound)
            }
            guard audited == true else { break }
            session.countHistory()
        }
        return session.result()
    }

    /// Tasks take permits in a loop while about a third of them are cancelled at random
    /// moments; returns the sections run.
    private static func burstRound(
        _ semaphore: AsyncSemaphore, width: Int, tasks: Int, sections: Int, session: StressSession, round: Int
    ) async -> Int {
        let inside = ManagedAtomic<Int>(0)
        let handles = (0..<tasks).map { _ in
            Task {
                var random = SeededGenerator.fresh()
                var ran = 0
                for _ in 0..<sections {
                    do {
                        try await semaphore.withPermit {
                            let holders = inside.wrappingIncrementThenLoad(ordering: .relaxed)
                            if holders > width {
                                session.violations.report(
                                    "round \(round): \(holders) tasks held a permit at once, width \(width)")
                            }
                            for _ in 0..<Int.random(in: 0...2, using: &random) { await Task.yield() }
                            inside.wrappingDecrement(ordering: .relaxed)
                        }
                        ran += 1
                    } catch {
                        break
                    }
                }
                return ran
            }
        }
        var random = SeededGenerator.fresh()
        for handle in handles where random.chance(33) {
            for _ in 0..<Int.random(in: 0...3, using: &random) { await Task.yield() }
            handle.cancel()
        }
        var sectionsRun = 0
        for handle in handles { sectionsRun += await handle.value }
        return sectionsRun
    }

    /// With every task finished: exactly `width` permits are free.
    private static func audit(_ semaphore: AsyncSemaphore, width: Int, session: StressSession, round: Int) async -> Bool
    {
        let taken = ManagedAtomic<Int>(0)
        let taker = Task {
            for _ in 0..<width {
                try await semaphore.wait()
                taken.wrappingIncrement(ordering: .relaxed)
            }
        }
        // Generous: the taker needs only a turn of the pool.
        guard await poll(timeout: .seconds(5), { taken.load(ordering: .relaxed) == width }) else {
            taker.cancel()
            session.violations.report(
                "round \(round): after the tasks finished only \(taken.load(ordering: .relaxed)) of \(width) "
                    + "permits could be taken: permits were lost")
            return false
        }
        let extraGot = ManagedAtomic<Bool>(false)
        let extra = Task {
            try await semaphore.wait()
            extraGot.store(true, ordering: .relaxed)
        }
        try? await Task.sleep(for: .milliseconds(1))
        let madeUp = extraGot.load(ordering: .relaxed)
        if madeUp {
            session.violations.report(
                "round \(round): a wait succeeded while all \(width) permits were held: a permit was made up")
        }
        // One permit for the extra waiter (it holds one once this returns), then the `width`
        // still out: the taker's, less the one passed on, and the extra waiter's.
        semaphore.signal()
        _ = try? await extra.value
        for _ in 0..<width { semaphore.signal() }
        return !madeUp
    }
}
