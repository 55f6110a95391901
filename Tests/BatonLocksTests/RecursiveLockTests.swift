import BatonLocks
import BatonTestSupport
import Foundation
import Testing

@Suite("RecursiveLock")
struct RecursiveLockTests {
    static let threads = 8
    static let incrementsPerThread = reducedUnderSanitizer(100_000, by: 5)

    @Test(
        "withLock: 8 threads × 100,000 increments (20,000 under a sanitizer) of a plain counter lose none",
        arguments: 1...3)
    func withLockExcludes(round: Int) {
        let lock = RecursiveLock()
        let counter = Guarded(0)  // guarded by `lock`
        let finished = raceThreads(Self.threads) { _ in
            for _ in 0..<Self.incrementsPerThread {
                lock.withLock { counter.value += 1 }
            }
        }
        // A thread left behind may hold the lock: touching it again would hang (raceThreads
        // has recorded the failure).
        guard finished else { return }
        #expect(lock.withLock { counter.value } == Self.threads * Self.incrementsPerThread)
    }

    @Test("Re-entered under contention: 8 threads × 20,000 nested increments lose none")
    func reentryExcludesUnderContention() {
        let iterations = 20_000
        let lock = RecursiveLock()
        let counter = Guarded(0)  // guarded by `lock`
        let finished = raceThreads(Self.threads) { _ in
            for _ in 0..<iterations {
                lock.withLock {
                    counter.value += 1
                    // The inner release must not free the lock: the outer section is still running.
                    lock.withLock { counter.value += 1 }
                    counter.value += 1
                }
            }
        }
        // A thread left behind may hold the lock: touching it again would hang (raceThreads
        // has recorded the failure).
        guard finished else { return }
        #expect(lock.withLock { counter.value } == 3 * Self.threads * iterations)
    }

    @Test("withLock re-entered 100 deep holds the lock throughout and frees it after the last exit")
    func withLockReentersToDepth100() {
        let lock = RecursiveLock()
        let deepest = Guarded(0)  // guarded by `lock`
        func enter(_ depth: Int) {
            lock.withLock {
                if depth < 100 {
                    enter(depth + 1)
                } else {
                    deepest.value = depth
                    #expect(runOnAnotherThread { lock.tryWithLock { true } == nil } == true)
                }
            }
        }
        enter(1)
        #expect(lock.withLock { deepest.value } == 100)
        #expect(runOnAnotherThread { lock.tryWithLock { true } } == true)
    }

    @Test("lock() 100 times: held until the 100th unlock(), free after it")
    func lockReentersToDepth100() {
        let lock = RecursiveLock()
        for _ in 0..<100 { lock.lock() }
        for _ in 0..<99 { lock.unlock() }
        #expect(runOnAnotherThread { lock.tryWithLock { true } == nil } == true)
        lock.unlock()
        #expect(runOnAnotherThread { lock.tryWithLock { true } } == true)
    }

    @Test("While another thread holds the lock, tryWithLock and tryLock fail at once; the body does not run")
    func tryWhileHeldElsewhere() {
        let lock = RecursiveLock()
        let holder = LockHolder { lock.withLock($0) }
        defer { holder.releaseAndJoin() }
        #expect(holder.waitUntilHeld())

        let ran = Guarded(false)  // written only if the body runs, which it must not
        #expect(lock.tryWithLock { ran.value = true } == nil)
        #expect(!ran.value)
        #expect(!lock.tryLock())

        #expect(holder.releaseAndJoin())
        #expect(lock.tryWithLock { 42 } == 42)
    }

    @Test("tryLock() that takes a free lock is released by one unlock()")
    func tryLockOfAFreeLockIsReleasedByOneUnlock() {
        let lock = RecursiveLock()
        #expect(lock.tryLock())
        #expect(runOnAnotherThread { lock.tryWithLock { true } == nil } == true)
        lock.unlock()
        #expect(runOnAnotherThread { lock.tryWithLock { true } } == true)
    }

    @Test("lock(), tryLock() and unlock() nested in withLock leave the section holding the lock")
    func lockAndUnlockNestedInWithLock() {
        let lock = RecursiveLock()
        lock.withLock {
            lock.lock()
            #expect(lock.tryLock())
            lock.unlock()
            lock.unlock()
            #expect(runOnAnotherThread { lock.tryWithLock { true } == nil } == true, "still held by withLock")
        }
        #expect(runOnAnotherThread { lock.tryWithLock { true } } == true)
    }

    @Test("tryWithLock and tryLock on the owner's thread re-enter")
    func tryOnOwnerThreadReenters() {
        let lock = RecursiveLock()
        let value = lock.withLock { lock.tryWithLock { 7 } }
        #expect(value == 7)

        lock.lock()
        #expect(lock.tryLock())
        lock.unlock()
        // Still held once: another thread cannot take it.
        #expect(runOnAnotherThread { lock.tryWithLock { true } == nil } == true)
        lock.unlock()
        #expect(runOnAnotherThread { lock.tryWithLock { true } } == true)
    }

    @Test("An error thrown from a nested withLock keeps its type, and every level is released")
    func nestedThrowReleasesEveryLevel() {
        let lock = RecursiveLock()
        do {
            try lock.withLock { () throws(TestError) -> Void in
                try lock.withLock { () throws(TestError) -> Void in throw .boom }
            }
            Issue.record("withLock returned instead of throwing")
        } catch {
            let thrown: TestError = error
            #expect(thrown == .boom)
        }
        #expect(runOnAnotherThread { lock.tryWithLock { true } } == true)
    }

    // Checked in every build, with its message, so no `#if DEBUG`.

    @Test("unlock() from a thread that does not hold the lock traps")
    func unlockFromNonOwnerTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            exitSuccessfullyIfStillRunning()
            let lock = RecursiveLock()
            let held = DispatchSemaphore(value: 0)
            // The owner keeps the lock (and its thread alive) until the process ends.
            _ = startThread {
                lock.lock()
                held.signal()
                _ = DispatchSemaphore(value: 0).wait(timeout: .distantFuture)
            }
            guard wait(for: held) else { return }
            lock.unlock()
        }
        let message = "unlock() called from a thread that does not hold the lock"
        #expect(standardError(of: result).contains(message))
    }

    @Test("unlock() of a free lock traps")
    func unlockWhenFreeTraps() async {
        await #expect(processExitsWith: .failure) {
            exitSuccessfullyIfStillRunning()
            RecursiveLock().unlock()
        }
    }

    @Test("One unlock() more than lock() traps")
    func unbalancedUnlockTraps() async {
        await #expect(processExitsWith: .failure) {
            exitSuccessfullyIfStillRunning()
            let lock = RecursiveLock()
            lock.lock()
            lock.lock()
            lock.unlock()
            lock.unlock()
            lock.unlock()
        }
    }
}
