import BatonLocks
import BatonTestSupport
import Foundation
import Testing

@Suite("RecursiveReadWriteLock")
struct SynchronizedLockTests {
    static let threads = 8
    static let incrementsPerThread = reducedUnderSanitizer(50_000, by: 5)

    @Test(
        "withLock: 8 threads × 50,000 increments (10,000 under a sanitizer) lose none", .timeLimit(.minutes(1)),
        arguments: 1...3)
    func withLockExcludes(round: Int) {
        let lock = RecursiveReadWriteLock()
        let counter = Guarded(0)  // guarded by `lock`
        let finished = raceThreads(Self.threads) { _ in
            for _ in 0..<Self.incrementsPerThread {
                lock.withLock { counter.value += 1 }
            }
        }
        // A thread left behind may hold the lock: touching it again would hang (raceThreads
        // has recorded the failure).
        guard finished else { return }
        #expect(lock.withReadLock { counter.value } == Self.threads * Self.incrementsPerThread)
    }

    @Test(
        "Nested sections under contention run inside the outer one: no update lost, no reader sees half a step",
        .timeLimit(.minutes(1)))
    func nestedSectionsUnderContention() {
        let iterations = 10_000
        let lock = RecursiveReadWriteLock()
        let pair = Guarded((0, 0))  // guarded by `lock`; both halves move together
        let torn = Guarded(0)  // written by readers only under `lock`'s exclusive side
        let finished = raceThreads(Self.threads) { thread in
            for _ in 0..<iterations {
                if thread % 2 == 0 {
                    lock.withLock {
                        pair.value.0 += 1
                        // Nested: must run now, inside this section, without releasing it.
                        lock.withLock { pair.value.1 += 1 }
                        let inside = lock.withReadLock { pair.value }
                        if inside.0 != inside.1 { torn.value += 1 }
                    }
                } else {
                    let seen = lock.withReadLock { pair.value }
                    if seen.0 != seen.1 { lock.withLock { torn.value += 1 } }
                }
            }
        }
        // A thread left behind may hold the lock: touching it again would hang (raceThreads
        // has recorded the failure).
        guard finished else { return }
        let (first, second) = lock.withReadLock { pair.value }
        #expect(first == Self.threads / 2 * iterations)
        #expect(second == first)
        #expect(lock.withReadLock { torn.value } == 0)
    }

    @Test("Readers on two threads are inside the shared side at the same time", .timeLimit(.minutes(1)))
    func readersShare() {
        let lock = RecursiveReadWriteLock()
        let firstInside = DispatchSemaphore(value: 0)
        let secondInside = DispatchSemaphore(value: 0)
        let bothInside = Guarded(false)  // written by the first reader only
        let first = startThread {
            lock.withReadLock {
                firstInside.signal()
                // Stays inside until the second reader is inside too; an exclusive read side
                // would never let it in, and this wait would time out.
                bothInside.value = wait(for: secondInside)
            }
        }
        #expect(wait(for: firstInside))
        let second = startThread { lock.withReadLock { _ = secondInside.signal() } }
        #expect(first.join())
        #expect(second.join())
        #expect(bothInside.value)
    }

    @Test(
        "A reader waits while another thread holds the exclusive side, and reads what it wrote",
        .timeLimit(.minutes(1)))
    func readerWaitsForTheWriter() {
        let lock = RecursiveReadWriteLock()
        let value = Guarded(0)  // guarded by `lock`
        let holder = LockHolder { body in
            lock.withLock {
                value.value = 1
                body()
                value.value = 2
            }
        }
        #expect(holder.waitUntilHeld())
        #expect(!lock.isHeldExclusivelyByCurrentThread)
        let readerID = Guarded<String?>(nil)  // written before the reader starts to wait
        let started = DispatchSemaphore(value: 0)
        let seen = Guarded(0)  // written by the reader under the lock, read after joining it
        let reader = startThread {
            readerID.value = currentKernelThreadID()
            started.signal()
            seen.value = lock.withReadLock { value.value }
        }
        #expect(wait(for: started))
        #expect(waitUntilParked(readerID.value), "the reader did not wait for the writer")
        #expect(holder.releaseAndJoin())
        #expect(reader.join())
        #expect(seen.value == 2)
    }

    @Test("lock() 50 times: held exclusively until the 50th unlock(), and by this thread only")
    func lockReentersToDepth50() {
        let lock = RecursiveReadWriteLock()
        for _ in 0..<50 { lock.lock() }
        #expect(lock.isHeldExclusivelyByCurrentThread)
        #expect(runOnAnotherThread { lock.isHeldExclusivelyByCurrentThread } == false)
        for _ in 0..<49 { lock.unlock() }
        #expect(lock.isHeldExclusivelyByCurrentThread)
        lock.unlock()
        #expect(!lock.isHeldExclusivelyByCurrentThread)
        // Free: another thread takes it at once.
        #expect(runOnAnotherThread { lock.withLock { true } } == true)
    }

    /// What `@Synchronized`'s `_modify` does: `lock()` and `unlock()` inside a `withLock`
    /// section. The inner `unlock()` releases only its own entry: the section still holds the
    /// lock, and a thread that asks for it waits (parked, by name if not) until `withLock`
    /// returns.
    @Test("lock() and unlock() nested in withLock leave the section holding the lock", .timeLimit(.minutes(1)))
    func lockAndUnlockNestedInWithLock() {
        let lock = RecursiveReadWriteLock()
        let entered = Guarded(false)  // written by the other thread under `lock`
        let otherID = Guarded<String?>(nil)  // written before the other thread starts to wait
        let started = DispatchSemaphore(value: 0)
        let (other, releasedInside) = lock.withLock {
            lock.lock()
            lock.unlock()
            #expect(lock.isHeldExclusivelyByCurrentThread)
            let other = startThread {
                otherID.value = currentKernelThreadID()
                started.signal()
                lock.withLock { entered.value = true }
            }
            #expect(wait(for: started))
            let parked = waitUntilParked(otherID.value)
            #expect(parked, "another thread took the lock inside the section")
            #expect(!entered.value)
            return (other, !parked || entered.value)
        }
        #expect(other.join())
        // A lock released inside the section was released again as withLock returned: its state
        // is no longer one any call can rely on, and a read could wait forever.
        guard !releasedInside else { return }
        #expect(lock.withReadLock { entered.value })
        #expect(!lock.isHeldExclusivelyByCurrentThread)
    }

    @Test("A throwing body rethrows its typed error and releases the lock")
    func throwingBodyReleases() {
        struct Refused: Error, Equatable {}
        let lock = RecursiveReadWriteLock()
        #expect(throws: Refused()) {
            try lock.withLock { () throws(Refused) in throw Refused() }
        }
        #expect(!lock.isHeldExclusivelyByCurrentThread)
        #expect(runOnAnotherThread { lock.withLock { true } } == true)
    }

    @Test("unlock() from a thread that does not hold the lock traps with a message")
    func foreignUnlockTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            exitSuccessfullyIfStillRunning()
            RecursiveReadWriteLock().unlock()
        }
        #expect(standardError(of: result).contains("does not hold the lock"))
    }
}
