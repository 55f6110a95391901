#if BATON_MODEL_CHECK && !canImport(Darwin)
@_spi(ModelChecking) import BatonLocks
import Atomics
import BatonModelChecking
import BatonTestSupport
import Testing

/// What a program's threads share besides the lock under check. Only the thread that holds
/// the scheduler's turn runs, and the turn passes through semaphores, so plain fields are safe.
final class Board: @unchecked Sendable {
    var inside = 0
    var readers = 0
    var writers = 0
    var entries = 0
    var mostReadersAtOnce = 0
    var writerHasHeld = false

    /// A critical section that must be alone: counts the entry, and pauses inside so that
    /// another thread may try to enter meanwhile.
    func holdAlone(_ m: ModelContext, _ lockName: String) {
        inside += 1
        m.expect(inside == 1, "two threads inside the \(lockName)")
        entries += 1
        m.pause("holds")
        inside -= 1
    }
}

/// `Lock`, `RecursiveLock` and `ReadWriteLock` under every interleaving of small programs (up
/// to three preemptions for two threads, two for three threads, which keeps each check within
/// seconds), and the checker itself on programs with the bugs it must find.
@Suite(.serialized, .offTheCooperativePool, .timeLimit(.minutes(5)))
struct ModelCheckTests {
    /// Checks the report: the exploration finished with no failure.
    func expectExhausted(_ report: ModelReport, _ comment: Comment? = nil) {
        #expect(report.failure == nil, "\(report)")
        #expect(report.exhausted, "\(report)")
        print("ModelCheckTests: \(comment?.rawValue ?? "") \(report)")
    }

    /// A program where `threads` threads each take `lock` `rounds` times.
    func lockProgram(threads: Int, rounds: Int) -> (inout ModelProgram) -> Void {
        { program in
            let lock = Lock()
            let board = Board()
            program.watch(lock)
            for _ in 0..<threads {
                program.thread { m in
                    for _ in 0..<rounds {
                        lock.withLock { board.holdAlone(m, "lock") }
                    }
                }
            }
            program.atEnd { m in
                m.expect(board.entries == threads * rounds, "\(board.entries) entries, not \(threads * rounds)")
            }
        }
    }

    @Test func lockExcludesAndWakesWithThreeThreads() {
        expectExhausted(ModelChecker().check(lockProgram(threads: 3, rounds: 1)), "Lock, 3 threads × 1:")
    }

    @Test func lockExcludesAndWakesWithTwoRounds() {
        expectExhausted(
            ModelChecker(preemptionBound: 3).check(lockProgram(threads: 2, rounds: 2)), "Lock, 2 threads × 2:")
    }

    /// A timed try among plain `withLock`s: the model may end its futex wait as a timeout at any
    /// step while it is parked (its own timeout, an hour, never runs out on the clock). Whether
    /// it gets the lock or gives up, every other thread gets in (a timed-out waiter neither
    /// keeps a wake nor lowers the word under a parked waiter: a lost one is reported as every
    /// thread left parked), no two are ever inside, and the lock is free at the end.
    ///
    /// `outcomes` collects, over the executions, whether the timed try got in and whether it
    /// gave up, to show that both were explored.
    func timedLockProgram(
        plainThreads: Int, timedRounds: Int, outcomes: Guarded<Set<Bool>>
    ) -> (inout ModelProgram) -> Void {
        { program in
            let lock = Lock()
            let board = Board()
            program.watch(lock)
            for _ in 0..<plainThreads {
                program.thread { m in lock.withLock { board.holdAlone(m, "lock") } }
            }
            let timedEntries = Guarded(0)  // only the thread holding the turn runs
            program.thread { m in
                for _ in 0..<timedRounds {
                    let entered: Void? = lock.tryWithLock(timeout: .seconds(3600)) {
                        board.holdAlone(m, "lock")
                    }
                    if entered != nil { timedEntries.value += 1 }
                    outcomes.value.insert(entered != nil)
                }
            }
            program.atEnd { m in
                let expected = plainThreads + timedEntries.value
                m.expect(board.entries == expected, "\(board.entries) entries, not \(expected)")
                m.expect(lock.tryWithLock { true } == true, "the lock is left held after every thread finished")
            }
        }
    }

    @Test func timedLockTimesOutAnywhereWithTwoOthers() {
        let outcomes = Guarded(Set<Bool>())
        expectExhausted(
            ModelChecker().check(timedLockProgram(plainThreads: 2, timedRounds: 1, outcomes: outcomes)),
            "Lock, 2 threads + 1 timed try:")
        #expect(outcomes.value == [true, false], "the timed try should both get in and give up in some executions")
    }

    @Test func timedLockTimesOutAnywhereTwice() {
        let outcomes = Guarded(Set<Bool>())
        expectExhausted(
            ModelChecker(preemptionBound: 3).check(
                timedLockProgram(plainThreads: 1, timedRounds: 2, outcomes: outcomes)),
            "Lock, 1 thread + 2 timed tries:")
        #expect(outcomes.value == [true, false], "the timed try should both get in and give up in some executions")
    }

    @Test func recursiveLockExcludesAcrossReentry() {
        let report = ModelChecker(preemptionBound: 3).check { program in
            let lock = RecursiveLock()
            let board = Board()
            program.watch(lock)
            for _ in 0..<2 {
                program.thread { m in
                    lock.lock()
                    lock.withLock { board.holdAlone(m, "recursive lock") }
                    lock.unlock()
                }
            }
            program.atEnd { m in m.expect(board.entries == 2, "\(board.entries) entries, not 2") }
        }
        expectExhausted(report, "RecursiveLock, 2 threads, nested:")
    }

    /// One writer and two readers: the writer is alone, readers only with readers; and some
    /// interleaving has both readers inside at once (the lock shares reading).
    @Test func readWriteLockExcludesWritersAndSharesReads() {
        var mostReadersAtOnce = 0
        let report = ModelChecker().check { program in
            let lock = ReadWriteLock()
            let board = Board()
            program.watch(lock)
            program.thread { m in
                lock.withWriteLock {
                    m.expect(board.readers == 0 && board.writers == 0, "the writer entered a held lock")
                    board.writers += 1
                    board.entries += 1
                    m.pause("writes")
                    board.writers -= 1
                }
            }
            for _ in 0..<2 {
                program.thread { m in
                    lock.withReadLock {
                        m.expect(board.writers == 0, "a reader entered while the writer held the lock")
                        board.readers += 1
                        board.mostReadersAtOnce = max(board.mostReadersAtOnce, board.readers)
                        board.entries += 1
                        m.pause("reads")
                        board.readers -= 1
                    }
                }
            }
            program.atEnd { m in
                m.expect(board.entries == 3, "\(board.entries) entries, not 3")
                mostReadersAtOnce = max(mostReadersAtOnce, board.mostReadersAtOnce)
            }
        }
        expectExhausted(report, "ReadWriteLock, 1 writer + 2 readers:")
        #expect(mostReadersAtOnce == 2)
    }

    /// A reader that arrives while a writer waits and another reader holds the lock does not
    /// enter before the writer has had it: readers cannot pass the lock from one to the next
    /// over a waiting writer. (Once the last reader has left, the lock is free until the woken
    /// writer takes it, and a reader arriving then may go first; the writer parks again, and
    /// keeps later readers out. That is bounded unfairness, not starvation.)
    func writerPreferenceProgram(_ program: inout ModelProgram) {
        let lock = ReadWriteLock()
        let board = Board()
        program.watch(lock)
        program.thread { m in
            lock.withReadLock {
                board.readers += 1
                m.pause("reads")
                board.readers -= 1
            }
        }
        program.thread { _ in lock.withWriteLock { board.writerHasHeld = true } }
        program.thread { m in
            let writerWaitsOnAReader = m.isWaiting(1) && board.readers > 0
            lock.withReadLock {
                m.expect(
                    !writerWaitsOnAReader || board.writerHasHeld,
                    "a reader that arrived while the writer waited on another reader entered first")
            }
        }
    }

    @Test func readWriteLockPrefersAParkedWriter() {
        expectExhausted(ModelChecker().check(writerPreferenceProgram), "ReadWriteLock, writer preference:")
    }

    /// Two writers: the second parks behind the first, and is woken when it leaves.
    func twoWritersProgram(_ program: inout ModelProgram) {
        let lock = ReadWriteLock()
        let board = Board()
        program.watch(lock)
        for _ in 0..<2 {
            program.thread { m in
                lock.withWriteLock {
                    m.expect(board.writers == 0, "two writers inside")
                    board.writers += 1
                    board.entries += 1
                    m.pause("writes")
                    board.writers -= 1
                }
            }
        }
        program.atEnd { m in m.expect(board.entries == 2, "\(board.entries) entries, not 2") }
    }

    @Test func readWriteLockWakesParkedWriters() {
        expectExhausted(ModelChecker(preemptionBound: 3).check(twoWritersProgram), "ReadWriteLock, 2 writers:")
    }

    /// A writer and two readers parked behind it: all get in.
    func readersBehindAWriterProgram(_ program: inout ModelProgram) {
        let lock = ReadWriteLock()
        let board = Board()
        program.watch(lock)
        program.thread { _ in lock.withWriteLock { board.entries += 1 } }
        for _ in 0..<2 {
            program.thread { _ in lock.withReadLock { board.entries += 1 } }
        }
        program.atEnd { m in m.expect(board.entries == 3, "\(board.entries) entries, not 3") }
    }

    @Test func readWriteLockWakesEveryParkedReader() {
        expectExhausted(ModelChecker().check(readersBehindAWriterProgram), "ReadWriteLock, readers behind a writer:")
    }

    // MARK: The checker finds what it is for: programs written here with the bugs it must find.
    // (The same bugs seeded in Baton's real lock code are entries of Scripts/seeded-bugs.catalog
    // that these suites' other tests catch.)

    /// A three-state futex lock written on the checker's own futex calls, whose unlock may drop
    /// its wake.
    final class ToyLock: Sendable {
        let word = ModelWord()
        let dropsWake: Bool

        init(dropsWake: Bool) { self.dropsWake = dropsWake }

        func lock(_ m: ModelContext) {
            if word.atomic.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged { return }
            while word.atomic.exchange(2, ordering: .acquiring) != 0 { m.futexWait(word.address, 2) }
        }

        func unlock(_ m: ModelContext) {
            if word.atomic.exchange(0, ordering: .releasing) == 2 && !dropsWake { m.futexWake(word.address, 1) }
        }
    }

    func toyLockProgram(dropsWake: Bool) -> (inout ModelProgram) -> Void {
        { program in
            let lock = ToyLock(dropsWake: dropsWake)
            let board = Board()
            program.watch(lock.word, as: "toy")
            for _ in 0..<2 {
                program.thread { m in
                    lock.lock(m)
                    board.holdAlone(m, "toy lock")
                    lock.unlock(m)
                }
            }
            program.atEnd { m in m.expect(board.entries == 2, "\(board.entries) entries, not 2") }
        }
    }

    @Test func aCorrectToyLockPasses() {
        expectExhausted(ModelChecker().check(toyLockProgram(dropsWake: false)), "toy lock:")
    }

    @Test func findsAnUnlockThatDropsItsWake() {
        let report = ModelChecker().check(toyLockProgram(dropsWake: true))
        #expect(report.failure?.kind == .lostWakeUp, "\(report)")
        let failure = report.failure
        #expect(failure?.message.hasPrefix("lost wake-up: every thread left is parked") == true, "\(report)")
        // The schedule names the threads' steps on the watched word, down to the parking.
        #expect(failure?.schedule.contains { $0.contains("futexWait(toy, 2): parks") } == true, "\(report)")
    }

    /// A flag and a value, where the writer may set the flag before the value is written.
    final class Publication: @unchecked Sendable {  // used only by the thread holding the turn
        let ready = ModelWord()
        var value = 0
    }

    func publicationProgram(early: Bool) -> (inout ModelProgram) -> Void {
        { program in
            let publication = Publication()
            program.watch(publication.ready, as: "ready")
            program.thread { m in
                if early { publication.ready.atomic.store(1, ordering: .releasing) }
                m.pause("writes the value")
                publication.value = 42
                publication.ready.atomic.store(1, ordering: .releasing)
            }
            program.thread { m in
                if publication.ready.atomic.load(ordering: .acquiring) == 1 {
                    m.expect(publication.value == 42, "the flag was set but the value was \(publication.value)")
                }
            }
        }
    }

    @Test func aFlagSetAfterTheValuePasses() {
        expectExhausted(ModelChecker().check(publicationProgram(early: false)), "publication:")
    }

    @Test func findsAFlagSetBeforeTheValue() {
        let report = ModelChecker().check(publicationProgram(early: true))
        #expect(report.failure?.kind == .violation, "\(report)")
        #expect(report.failure?.message == "the flag was set but the value was 0", "\(report)")
    }

    /// A thread that waits for a word nobody changes, spinning: a livelock, reported as one.
    @Test func findsALivelock() {
        let report = ModelChecker(stepLimit: 50).check { program in
            let publication = Publication()
            program.watch(publication.ready, as: "ready")
            program.thread { _ in
                while publication.ready.atomic.load(ordering: .acquiring) == 0 {}
            }
        }
        #expect(report.failure?.kind == .stepLimit, "\(report)")
    }

    /// A check that runs out of executions says so: never a silent pass.
    @Test func aBoundedExplorationSaysSo() {
        let report = ModelChecker(executionLimit: 3).check(lockProgram(threads: 2, rounds: 1))
        #expect(report.failure == nil)
        #expect(!report.exhausted)
        #expect(report.executions == 3)
        #expect("\(report)" == "bounded: 3 interleavings explored, not exhausted")
    }
}
#elseif BATON_MODEL_CHECK
import Testing

/// The model checker drives the futex words of Baton's Linux locks; on Darwin the locks are
/// `os_unfair_lock`, which it cannot schedule.
@Suite struct ModelCheckTests {
    @Test(.disabled("the model checker runs on Linux only: on Darwin the locks are os_unfair_lock"))
    func modelCheckerRunsOnLinuxOnly() {}
}
#endif
