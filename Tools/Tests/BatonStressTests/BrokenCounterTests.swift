import BatonLocks
import BatonStress
import BatonTesting
import Foundation
import Testing

/// A counter whose increment reads under the read lock and writes under a separate write lock:
/// two increments can read the same value, and one update is lost.
private final class BrokenCounter {
    private let lock = ReadWriteLock()
    private var value = 0  // guarded by `lock`

    /// Increments non-atomically; `pause` runs between the read and the write.
    func increment(pause: () -> Void = {}) -> Int {
        let seen = lock.withReadLock { value }
        pause()
        return lock.withWriteLock {
            value = seen + 1
            return value
        }
    }

    func read() -> Int {
        lock.withReadLock { value }
    }
}

// `value` is only touched inside `lock` (the bug is in what increment does between the two
// sections, not in unguarded access).
extension BrokenCounter: @unchecked Sendable {}

/// The checker catches a real lost update, made on two real threads in a fixed interleaving:
/// A reads 0; B increments fully (reads 0, writes 1); A writes 1. Both increments return 1.
@Suite struct BrokenCounterTests {
    typealias Log = HistoryLog<CounterModel.Operation, Int>

    @Test func lostUpdateOnRacingThreadsIsCaught() throws {
        let counter = BrokenCounter()
        let clock = LogicalClock()
        let aHasRead = DispatchSemaphore(value: 0)
        let bHasWritten = DispatchSemaphore(value: 0)
        let logs = Protected([Log]())
        let done = DispatchGroup()

        done.enter()
        Thread {
            var log = Log(clock: clock, thread: 0)
            log.record(.increment) {
                counter.increment {
                    aHasRead.signal()
                    bHasWritten.wait()
                }
            }
            logs.write { $0.append(log) }
            done.leave()
        }.start()

        done.enter()
        Thread {
            var log = Log(clock: clock, thread: 1)
            aHasRead.wait()
            log.record(.increment) { counter.increment() }
            bHasWritten.signal()
            logs.write { $0.append(log) }
            done.leave()
        }.start()

        try #require(done.wait(timeout: .now() + 60) == .success)
        var main = Log(clock: clock, thread: 2)
        main.record(.read) { counter.read() }
        let history = logs.value.flatMap(\.entries) + main.entries

        #expect(history.allSatisfy { $0.output == 1 }, "both increments returned 1, and so did the read")
        let verdict = LinearizabilityChecker(model: CounterModel()).check(history)
        let violation = try #require(verdict.violation, "the lost update was not caught: \(verdict)")
        #expect(violation.blockedOperation.contains("increment → 1"))
        #expect(violation.linearizedCount == 1)

        // The same interleaving on a correct counter is linearizable.
        let correct = Protected(0)
        var fixed = Log(clock: clock, thread: 0)
        for _ in 0..<2 {
            fixed.record(.increment) {
                correct.write { value in
                    value += 1
                    return value
                }
            }
        }
        fixed.record(.read) { correct.value }
        #expect(LinearizabilityChecker(model: CounterModel()).check(fixed.entries) == .linearizable)
    }
}
