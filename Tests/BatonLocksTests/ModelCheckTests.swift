#if BATON_MODEL_CHECK && !canImport(Darwin)
@_spi(ModelChecking) import BatonLocks
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
/// seconds), and the protocol bugs the checker must find in them.
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

    // MARK: Seeded bugs: the checker must find each one.

    func expectFound(
        _ bug: SeededBug, _ kind: ModelFailure.Kind, in program: (inout ModelProgram) -> Void
    ) {
        let report = ModelChecker(seededBug: bug).check(program)
        #expect(report.failure?.kind == kind, "\(bug): \(report)")
        print("ModelCheckTests: seeded \(bug): found after \(report.executions) interleavings")
        if let failure = report.failure {
            // The schedule names the threads' steps on the watched words.
            #expect(failure.schedule.contains { $0.contains("T1") && $0.contains("futex") } || kind == .violation)
        }
    }

    @Test func findsAnUnlockThatDropsItsWake() {
        expectFound(.unlockDropsWake, .lostWakeUp, in: lockProgram(threads: 2, rounds: 1))
    }

    @Test func findsReadersWokenOneAtATime() {
        expectFound(.readersWokenOneAtATime, .lostWakeUp, in: readersBehindAWriterProgram)
    }

    @Test func findsAWriterThatParksWithoutRechecking() {
        expectFound(.writerParksWithoutRecheck, .lostWakeUp, in: twoWritersProgram)
    }

    @Test func findsReadersThatPassAParkedWriter() {
        expectFound(.readersIgnoreParkedWriter, .violation, in: writerPreferenceProgram)
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
#endif
