import Atomics
import BatonTesting

/// Runs each body on a thread of its own, releases them together, and returns the wall time
/// from the release until the last one finished.
///
/// The threads are created and parked before the clock starts, so thread creation is not
/// measured.
func raceThreads(_ bodies: [@Sendable () -> Void]) -> Duration {
    raceThreads(bodies, cap: nil)
}

/// ``raceThreads(_:)``, but if the bodies have not all finished within `cap`, sets `stop`
/// (which they poll) and waits for them to see it; the time returned then runs until the last
/// one finished what it was doing.
func raceThreads(_ bodies: [@Sendable () -> Void], cap: Duration, stop: ManagedAtomic<Bool>) -> Duration {
    raceThreads(bodies, cap: (cap, stop))
}

private func raceThreads(
    _ bodies: [@Sendable () -> Void], cap: (limit: Duration, stop: ManagedAtomic<Bool>)?
) -> Duration {
    let threads = GatedThreads(count: bodies.count) { bodies[$0]() }
    let clock = ContinuousClock()
    let start = clock.now
    threads.open()
    if let cap, threads.join(timeout: cap.limit) > 0 {
        cap.stop.store(true, ordering: .relaxed)
    }
    threads.join()
    return clock.now - start
}

/// Times `body` on the calling thread.
func timeOnThisThread(_ body: () throws -> Void) rethrows -> Duration {
    try ContinuousClock().measure(body)
}

/// Keeps the optimiser from deleting a computation whose result is otherwise unused.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}
