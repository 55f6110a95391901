import BatonLocks
import Foundation
import Testing

/// Racing threads released together from a start barrier: every increment made under the lock
/// is counted, none lost. (The BatonLocksTests target had no sources, which SwiftPM rejects.)
@Suite struct LockCountingTests {
    static let threads = 8
    static let incrementsPerThread = 5_000

    /// Runs `body` on `threads` threads released together, and waits for all of them on a
    /// thread of its own (never blocking Swift's cooperative pool).
    static func race(_ body: @escaping @Sendable () -> Void) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread {
                let ready = DispatchGroup()
                let gate = DispatchSemaphore(value: 0)
                let done = DispatchGroup()
                for _ in 0..<threads {
                    ready.enter()
                    done.enter()
                    Thread {
                        ready.leave()
                        gate.wait()
                        body()
                        done.leave()
                    }.start()
                }
                ready.wait()
                for _ in 0..<threads { gate.signal() }
                done.wait()
                continuation.resume()
            }.start()
        }
    }

    @Test(arguments: 1...3) func lockCountsEveryIncrement(_ round: Int) async {
        let lock = Lock()
        let counter = Protected(0)
        await Self.race {
            for _ in 0..<Self.incrementsPerThread {
                lock.withLock { counter.write { $0 += 1 } }
            }
        }
        #expect(counter.value == Self.threads * Self.incrementsPerThread)
    }

    @Test(arguments: 1...3) func protectedCountsEveryIncrement(_ round: Int) async {
        let counter = Protected(0)
        await Self.race {
            for _ in 0..<Self.incrementsPerThread { counter.write { $0 += 1 } }
        }
        #expect(counter.value == Self.threads * Self.incrementsPerThread)
    }
}
