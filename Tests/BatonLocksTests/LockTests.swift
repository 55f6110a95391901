import BatonLocks
import BatonTestSupport
import Foundation
import Testing

// Every test here could hang on a broken lock (a lost wake-up parks a thread for good), so each
// has a time limit, and each bounds its own waits well inside it: a time limit does not unstick
// a thread blocked synchronously, so the test gives up on a stuck thread by itself and fails by
// name.
@Suite("Lock", .timeLimit(.minutes(1)))
struct LockTests {
    static let threads = 8
    static let incrementsPerThread = 20_000
    /// How long a race may take, inside the time limit: a correct lock finishes in seconds even
    /// under the thread sanitizer on a loaded two-core machine.
    static let raceBound: Duration = .seconds(45)

    @Test("withLock: 8 threads × 20,000 increments of a plain counter lose none", arguments: 1...3)
    func withLockExcludes(round: Int) {
        let lock = Lock()
        let counter = Guarded(0)  // guarded by `lock`
        let finished = raceThreads(Self.threads, timeout: Self.raceBound) { _ in
            for _ in 0..<Self.incrementsPerThread {
                lock.withLock { counter.value += 1 }
            }
        }
        // A thread left behind may hold the lock or race on the counter: read neither.
        guard finished else { return }
        #expect(lock.withLock { counter.value } == Self.threads * Self.incrementsPerThread)
    }

    @Test("lock()/unlock(): 8 threads × 20,000 increments of a plain counter lose none", arguments: 1...3)
    func lockAndUnlockExclude(round: Int) {
        let lock = Lock()
        let counter = Guarded(0)  // guarded by `lock`
        let finished = raceThreads(Self.threads, timeout: Self.raceBound) { _ in
            for _ in 0..<Self.incrementsPerThread {
                lock.lock()
                counter.value += 1
                lock.unlock()
            }
        }
        guard finished else { return }
        lock.lock()
        #expect(counter.value == Self.threads * Self.incrementsPerThread)
        lock.unlock()
    }

    @Test("A free lock: tryWithLock runs the body and returns its value, tryLock succeeds")
    func tryOnAFreeLock() {
        let lock = Lock()
        #expect(lock.tryWithLock { "ran" } == "ran")
        #expect(lock.tryLock())
        lock.unlock()
        // Both released the lock: another thread takes it at once.
        #expect(runOnAnotherThread { lock.tryWithLock { true } } == true)
    }

    @Test("While another thread holds the lock, tryWithLock and tryLock fail at once; the body does not run")
    func tryWhileHeldElsewhere() {
        let lock = Lock()
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

    @Test("An error thrown in withLock's body keeps its type, and the lock is released")
    func withLockRethrowsAndReleases() {
        let lock = Lock()
        do {
            try lock.withLock { () throws(TestError) -> Void in throw .boom }
            Issue.record("withLock returned instead of throwing")
        } catch {
            // Typed throws: `error` is statically a TestError, not `any Error`.
            let thrown: TestError = error
            #expect(thrown == .boom)
        }
        #expect(runOnAnotherThread { lock.tryWithLock { true } } == true)
    }

    @Test("An error thrown in tryWithLock's body keeps its type, and the lock is released")
    func tryWithLockRethrowsAndReleases() {
        let lock = Lock()
        do {
            _ = try lock.tryWithLock { () throws(TestError) -> Int in throw .boom }
            Issue.record("tryWithLock returned instead of throwing")
        } catch {
            let thrown: TestError = error
            #expect(thrown == .boom)
        }
        #expect(runOnAnotherThread { lock.tryWithLock { true } } == true)
    }

    #if DEBUG
    // The misuse checks exist only in debug builds; release builds do not check.

    @Test("Debug: lock() on the thread that holds the lock traps with a message instead of deadlocking")
    func relockTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            exitSuccessfullyIfStillRunning()
            let lock = Lock()
            lock.lock()
            lock.lock()
        }
        #expect(standardError(of: result).contains("re-locked on the thread that already holds it"))
    }

    @Test("Debug: a lock re-locked by its holder is reported to the handler, as a deadlock, before it traps")
    func relockIsReportedBeforeTheTrap() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            exitSuccessfullyIfStillRunning()
            LockDiagnostics.setReportHandler { report in
                if case .reentry(let reentry) = report {
                    FileHandle.standardError.write(Data("handler: re-entry, deadlocks \(reentry.deadlocks)\n".utf8))
                }
            }
            let lock = Lock(name: "ledger")
            lock.lock()
            lock.lock()
        }
        #expect(standardError(of: result).contains("handler: re-entry, deadlocks true"))
    }

    @Test("Debug: withLock nested in its own body traps with a message instead of deadlocking")
    func nestedWithLockTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            exitSuccessfullyIfStillRunning()
            let lock = Lock()
            lock.withLock { lock.withLock {} }
        }
        #expect(standardError(of: result).contains("re-locked on the thread that already holds it"))
    }

    @Test("Debug: unlock() of a lock that is not locked traps with a message")
    func unlockWhenFreeTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            exitSuccessfullyIfStillRunning()
            Lock().unlock()
        }
        #expect(standardError(of: result).contains("unlock() called on a lock that is not locked"))
    }

    @Test("Debug: unlock() of a lock that was locked and unlocked before traps as not locked, naming no holder")
    func unlockAfterUnlockTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            exitSuccessfullyIfStillRunning()
            let lock = Lock()
            lock.lock()
            lock.unlock()
            lock.unlock()
        }
        #expect(standardError(of: result).contains("unlock() called on a lock that is not locked"))
    }

    @Test(
        "Debug: tryWithLock(timeout:) on the thread that holds the lock traps instead of waiting out its timeout, with every diagnostic off too"
    )
    func timedRelockTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            exitSuccessfullyIfStillRunning()
            // The lock's own check, not the order checker's: a debug build makes it either way.
            LockDiagnostics.checksLockOrder = false
            let lock = Lock()
            lock.withLock { _ = lock.tryWithLock(timeout: .seconds(600)) {} }
        }
        #expect(standardError(of: result).contains("re-locked on the thread that already holds it"))
    }

    @Test("Debug: unlock() of a lock that another thread holds traps with a message")
    func unlockFromNonHolderTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            exitSuccessfullyIfStillRunning()
            let lock = Lock()
            let held = DispatchSemaphore(value: 0)
            // The holder keeps the lock (and its thread alive) until the process ends.
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
    #endif
}
