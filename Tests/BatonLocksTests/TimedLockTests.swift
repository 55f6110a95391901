import BatonLocks
import BatonTestSupport
import Foundation
import Testing

// `Lock.tryWithLock(timeout:)`. As in LockTests, every wait here is bounded well inside the time
// limit, and nothing is inferred from how long anything took: a timeout that fires is shown by
// its result while the holder still holds the lock, one that does not by a parked waiter that
// gets the lock once it is freed.
@Suite("Lock: tryWithLock(timeout:)", .timeLimit(.minutes(2)))
struct TimedLockTests {
    /// A timed try of `lock` on a thread of its own, whose body notes that it ran: `.some(nil)`
    /// if it timed out, `nil` if it had not returned within `generousTimeout`.
    func timedTry(_ lock: Lock, _ timeout: Duration, ran: Locked<Bool>) -> Bool?? {
        runOnAnotherThread {
            lock.tryWithLock(timeout: timeout) {
                ran.set(true)
                return true
            }
        }
    }

    @Test("A free lock: the body runs at once and its value is returned; the lock is released")
    func freeLock() {
        let lock = Lock()
        #expect(lock.tryWithLock(timeout: .seconds(60)) { "ran" } == "ran")
        #expect(runOnAnotherThread { lock.tryWithLock { true } } == true)
    }

    @Test(
        "Held by another thread past the timeout: nil, the body does not run, and the lock works after",
        arguments: [Duration.nanoseconds(1), .microseconds(50), .milliseconds(20)])
    func timesOutWhileHeld(timeout: Duration) {
        let lock = Lock()
        let holder = LockHolder { lock.withLock($0) }
        defer { holder.releaseAndJoin() }
        #expect(holder.waitUntilHeld())

        let ran = Locked(false)
        // On a thread of its own, bounded: a wait that ignored its timeout would hold on until the
        // holder lets go, which it does only after this returns.
        let result = timedTry(lock, timeout, ran: ran)
        #expect(result != nil, "tryWithLock(timeout: \(timeout)) did not return while the lock stayed held")
        #expect(result == .some(nil))
        #expect(!ran.get())

        #expect(holder.releaseAndJoin())
        #expect(runOnAnotherThread { lock.tryWithLock(timeout: .seconds(60)) { 42 } } == .some(42))
        #expect(lock.tryWithLock { true } == true)
    }

    @Test(
        "A zero or negative timeout makes one try: nil at once while the lock is held, the value while it is free",
        arguments: [Duration.zero, .nanoseconds(-1), .seconds(-60)])
    func zeroOrNegativeTimeout(timeout: Duration) {
        let lock = Lock()
        #expect(lock.tryWithLock(timeout: timeout) { 1 } == 1)

        let holder = LockHolder { lock.withLock($0) }
        defer { holder.releaseAndJoin() }
        #expect(holder.waitUntilHeld())
        let ran = Locked(false)
        let result = timedTry(lock, timeout, ran: ran)
        #expect(result == .some(nil))
        #expect(!ran.get())
        #expect(holder.releaseAndJoin())
        #expect(lock.tryWithLock(timeout: timeout) { 2 } == 2)
    }

    @Test("A waiter parked with a timeout is woken when the lock is freed in time, and runs the body")
    func takenWhenFreedInTime() {
        let lock = Lock()
        let holder = LockHolder { lock.withLock($0) }
        defer { holder.releaseAndJoin() }
        #expect(holder.waitUntilHeld())

        let waiterID = Locked<String?>(nil)
        let result = Locked<Int??>(nil)
        // Its timeout is far beyond the join's bound: only a wake can end its wait in time.
        let waiter = startThread {
            waiterID.set(currentKernelThreadID())
            result.set(lock.tryWithLock(timeout: .seconds(600)) { 7 })
        }
        #expect(eventually { waiterID.get() != nil } && waitUntilParked(waiterID.get()))
        #expect(holder.releaseAndJoin())
        #expect(waiter.join())
        #expect(result.get() == .some(7))
    }

    /// A waiter that parks marks the word contended; one that then gives up must leave that mark,
    /// which is the only thing that makes the holder's unlock wake the waiter parked beside it.
    @Test("A waiter that timed out leaves the next unlock's wake to the waiter parked beside it")
    func timedOutWaiterLeavesTheWakeToTheOthers() {
        let lock = Lock()
        let holder = LockHolder { lock.withLock($0) }
        defer { holder.releaseAndJoin() }
        #expect(holder.waitUntilHeld())

        let patientID = Locked<String?>(nil)
        let patientRan = Locked(false)
        let patient = startThread {
            patientID.set(currentKernelThreadID())
            lock.withLock { patientRan.set(true) }
        }
        #expect(eventually { patientID.get() != nil } && waitUntilParked(patientID.get()))

        // Parks behind the holder and the patient waiter, then gives up.
        let ran = Locked(false)
        let impatient = timedTry(lock, .milliseconds(20), ran: ran)
        #expect(impatient == .some(nil))
        #expect(!ran.get())

        #expect(holder.releaseAndJoin())
        #expect(patient.join(), "the waiter parked beside the one that timed out was never woken")
        #expect(patientRan.get())
    }

    @Test("An error thrown in the body keeps its type, and the lock is released")
    func rethrowsAndReleases() {
        let lock = Lock()
        do {
            _ = try lock.tryWithLock(timeout: .seconds(60)) { () throws(TestError) -> Int in throw .boom }
            Issue.record("tryWithLock(timeout:) returned instead of throwing")
        } catch {
            let thrown: TestError = error
            #expect(thrown == .boom)
        }
        #expect(runOnAnotherThread { lock.tryWithLock { true } } == true)
    }

    /// Timed tries with tiny timeouts (some over before a thread can park, some that park and
    /// time out, some that are woken) race holders that take the lock with `withLock`, some of
    /// them sleeping inside it so that the timed waiters park. Many short rounds, so that a wake
    /// a timed waiter lost near the end of a round leaves a holder parked for good, which the
    /// round's bounded join reports. Exact counts: every increment under the lock, by a holder
    /// or a timed try that got it, is there.
    @Test(
        "A storm of timed tries with tiny timeouts against holders: exact count, no thread left parked",
        arguments: 1...2)
    func stormOfTimedTries(storm: Int) {
        let lock = Lock()
        let counter = Guarded(0)  // guarded by `lock`
        let won = Locked(0)
        let holders = 2
        let tryers = 4
        let iterations = 300
        let timeouts: [Duration] = [.nanoseconds(1), .microseconds(2), .microseconds(20), .microseconds(200)]
        let rounds = 25
        for round in 0..<rounds {
            let finished = raceThreads(holders + tryers, timeout: .seconds(30)) { index in
                if index < holders {
                    for iteration in 0..<iterations {
                        lock.withLock {
                            counter.value += 1
                            if (iteration + index).isMultiple(of: 8) { usleep(30) }
                        }
                    }
                } else {
                    var mine = 0
                    for iteration in 0..<iterations {
                        let timeout = timeouts[(iteration + index + round) % timeouts.count]
                        if lock.tryWithLock(timeout: timeout, { counter.value += 1 }) != nil { mine += 1 }
                    }
                    won.withValue { $0 += mine }
                }
            }
            // A thread left parked may still take the lock: read nothing it guards.
            guard finished else { return }
            let expected = (round + 1) * holders * iterations + won.get()
            #expect(lock.withLock { counter.value } == expected, "round \(round)")
        }
        // The lock still works for everyone: a timed try, a plain one, and withLock on another thread.
        #expect(runOnAnotherThread { lock.tryWithLock(timeout: .seconds(60)) { true } } == .some(true))
        #expect(lock.tryWithLock { true } == true)
        #expect(runOnAnotherThread { lock.withLock { counter.value } } == rounds * holders * iterations + won.get())
    }

    // Checked in every build: the child turns the lock-order check on, which reports a re-entry in
    // a release build as the debug owner check does in a debug one.

    @Test("Re-entry with a timeout is reported and stops, as nested withLock does, instead of timing out")
    func reentryWithTimeoutStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            exitSuccessfullyIfStillRunning()
            LockDiagnostics.checksLockOrder = true
            let lock = Lock(name: "registry")
            // Without a report, this would wait out its timeout and return nil: past the exit above.
            lock.withLock { _ = lock.tryWithLock(timeout: .seconds(60)) {} }
        }
        let text = standardError(of: result)
        #expect(text.contains("re-locked on the thread that already holds it"))
    }
}
