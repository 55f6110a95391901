import Atomics
import Foundation

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
    let ready = DispatchSemaphore(value: 0)
    let gate = DispatchSemaphore(value: 0)
    let done = DispatchGroup()
    for body in bodies {
        done.enter()
        let thread = Thread {
            ready.signal()
            gate.wait()
            body()
            done.leave()
        }
        thread.start()
    }
    for _ in bodies { ready.wait() }
    let clock = ContinuousClock()
    let start = clock.now
    for _ in bodies { gate.signal() }
    if let cap, done.wait(timeout: .now() + cap.limit.timeInterval) == .timedOut {
        cap.stop.store(true, ordering: .relaxed)
    }
    done.wait()
    return clock.now - start
}

/// Times `body` on the calling thread.
func timeOnThisThread(_ body: () throws -> Void) rethrows -> Duration {
    try ContinuousClock().measure(body)
}

extension Duration {
    /// The duration in nanoseconds, as a floating-point number.
    var nanoseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1e9 + Double(attoseconds) / 1e9
    }
}

/// Keeps the optimiser from deleting a computation whose result is otherwise unused.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

/// A small, fast, seedable generator (SplitMix64), so workloads are the same in every run.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
