import BatonLocks
import BatonTestSupport
import Foundation
import Testing

@Suite("ReadWriteLock")
struct ReadWriteLockTests {
    static let threads = 8
    static let incrementsPerThread = reducedUnderSanitizer(100_000, by: 5)

    // MARK: Exclusion

    @Test(
        "withWriteLock: 8 threads × 100,000 increments (20,000 under a sanitizer) of a plain counter lose none",
        arguments: 1...3)
    func writeLockExcludes(round: Int) {
        let lock = ReadWriteLock()
        let counter = Guarded(0)  // guarded by `lock`
        let finished = raceThreads(Self.threads) { _ in
            for _ in 0..<Self.incrementsPerThread {
                lock.withWriteLock { counter.value += 1 }
            }
        }
        // A thread left behind may hold the lock: touching it again would hang (raceThreads
        // has recorded the failure).
        guard finished else { return }
        #expect(lock.withReadLock { counter.value } == Self.threads * Self.incrementsPerThread)
    }

    // Rounds one after another: three at once put 18 threads on the CI machine's 2 cores, which
    // under TSan takes several times longer than the rounds in turn and proves nothing more.
    @Test(
        "Readers never see a write half done, and no write is lost, while 2 writers race 4 readers",
        .serialized, arguments: 1...3)
    func readersNeverSeeTornWrites(round: Int) {
        let writers = 2
        let readers = 4
        let writesPerWriter = 20_000
        let readsPerReader = 20_000
        let lock = ReadWriteLock()
        // A write bumps all 16 fields one after another, so a reader that overlaps a write
        // finds them unequal.
        let fields = Fields()  // guarded by `lock`
        let tornReads = Locked(0)
        let finished = raceThreads(writers + readers) { index in
            if index < writers {
                for _ in 0..<writesPerWriter {
                    lock.withWriteLock {
                        for field in 0..<Fields.count { fields[field] += 1 }
                    }
                }
            } else {
                var torn = 0
                for _ in 0..<readsPerReader {
                    lock.withReadLock {
                        let first = fields[0]
                        if (1..<Fields.count).contains(where: { fields[$0] != first }) { torn += 1 }
                    }
                }
                tornReads.withValue { $0 += torn }
            }
        }
        // A thread left behind may hold the lock: touching it again would hang (raceThreads
        // has recorded the failure).
        guard finished else { return }
        #expect(tornReads.get() == 0)
        let expected = Array(repeating: writers * writesPerWriter, count: Fields.count)
        #expect(lock.withReadLock { fields.all } == expected)
    }

    // MARK: Shared reading

    @Test("Two threads are inside withReadLock at the same time")
    func readersShareTheLock() {
        let lock = ReadWriteLock()
        let arrived = [DispatchSemaphore(value: 0), DispatchSemaphore(value: 0)]
        let met = Locked(0)
        let finished = raceThreads(2) { index in
            lock.withReadLock {
                arrived[index].signal()
                // The other reader's signal comes from inside its read section, so this wait
                // succeeds only if both are inside at once. Were readers exclusive, it would
                // time out and the test fail, not hang.
                if wait(for: arrived[1 - index]) {
                    met.withValue { $0 += 1 }
                }
            }
        }
        // A thread left behind may hold the lock: touching it again would hang (raceThreads
        // has recorded the failure).
        guard finished else { return }
        #expect(met.get() == 2)
    }

    @Test("While another thread reads: tryWithReadLock succeeds, tryWithWriteLock fails, its body unrun")
    func tryWhileReadLocked() {
        let lock = ReadWriteLock()
        let reader = LockHolder { lock.withReadLock($0) }
        defer { reader.releaseAndJoin() }
        #expect(reader.waitUntilHeld())

        #expect(lock.tryWithReadLock { "shared" } == "shared")
        let ran = Guarded(false)  // written only if the body runs, which it must not
        #expect(lock.tryWithWriteLock { ran.value = true } == nil)
        #expect(!ran.value)

        #expect(reader.releaseAndJoin())
        #expect(lock.tryWithWriteLock { "exclusive" } == "exclusive")
    }

    @Test("While another thread writes: tryWithReadLock and tryWithWriteLock fail, their bodies unrun")
    func tryWhileWriteLocked() {
        let lock = ReadWriteLock()
        let writer = LockHolder { lock.withWriteLock($0) }
        defer { writer.releaseAndJoin() }
        #expect(writer.waitUntilHeld())

        let ran = Guarded(false)  // written only if a body runs, which it must not
        #expect(lock.tryWithReadLock { ran.value = true } == nil)
        #expect(lock.tryWithWriteLock { ran.value = true } == nil)
        #expect(!ran.value)

        #expect(writer.releaseAndJoin())
        #expect(lock.tryWithReadLock { 1 } == 1)
        #expect(lock.tryWithWriteLock { 2 } == 2)
    }

    // MARK: Writer preference

    @Test(
        "A writer gets in although readers keep overlapping, each entering before the last one leaves",
        .timeLimit(.minutes(1)))
    func writerIsNotStarvedByOverlappingReaders() {
        // Two reader threads pass the read lock back and forth so that it is never free of
        // readers: the one inside asks the other to join it and leaves only once the other is
        // inside too, or has been refused. A reader-preferring lock never refuses a reader
        // while only readers hold it, so the readers keep it for ever and starve the writer,
        // however the threads are scheduled. A writer-preferring one refuses the next reader
        // once the writer waits: the reader inside then leaves, and the writer gets in.
        struct Baton {
            var handovers = 0
            var refusals = 0
            var writerStarted = false
            var stop = false
        }
        let lock = ReadWriteLock()
        let baton = Locked(Baton())
        // `turn[r]`: reader r may try to join. `answered[r]`: reader r, inside, may leave (the
        // other reader has joined it or been refused).
        let turn = [DispatchSemaphore(value: 0), DispatchSemaphore(value: 0)]
        let answered = [DispatchSemaphore(value: 0), DispatchSemaphore(value: 0)]
        let readers = (0..<2).map { me in
            startThread {
                while wait(for: turn[me]), !baton.get().stop {
                    let joined: Void? = lock.tryWithReadLock {
                        baton.withValue { $0.handovers += 1 }
                        answered[1 - me].signal()  // the other may leave: this one is inside
                        turn[1 - me].signal()
                        _ = wait(for: answered[me])
                    }
                    if joined == nil {
                        // Refused while another reader holds the lock: only a waiting writer
                        // may cause that.
                        let early = baton.withValue { baton in
                            baton.refusals += 1
                            return !baton.writerStarted
                        }
                        if early { Issue.record("a reader was refused while no writer waited") }
                        answered[1 - me].signal()
                        return
                    }
                }
                answered[1 - me].signal()  // stopped: let the other leave if it is inside
            }
        }
        // Reader 0 first joins this thread's read section, which leaves as reader 1 would.
        lock.withReadLock {
            turn[0].signal()
            #expect(wait(for: answered[1]), "the first reader did not join")
        }
        #expect(eventually { baton.get().handovers >= 100 }, "the readers did not take turns")

        baton.withValue { $0.writerStarted = true }
        let writer = startThread { lock.withWriteLock {} }
        // Bounded only so that starvation fails the test instead of hanging it.
        #expect(writer.join(), "the writer was starved by overlapping readers for \(generousTimeout)")
        #expect(baton.get().refusals == 1)

        baton.withValue { $0.stop = true }
        for semaphore in turn { semaphore.signal() }
        for reader in readers { #expect(reader.join()) }
        #expect(writer.join())
    }

    @Test("Once a writer waits, tryWithReadLock fails, new readers wait, and the writer goes before them")
    func waitingWriterGoesBeforeNewReaders() {
        let lock = ReadWriteLock()
        let order = Locked<[String]>([])

        let firstReader = LockHolder { lock.withReadLock($0) }
        #expect(firstReader.waitUntilHeld())

        let writerID = Locked<String?>(nil)
        let writerStarting = DispatchSemaphore(value: 0)
        let writer = startThread {
            writerID.set(currentKernelThreadID())
            writerStarting.signal()
            lock.withWriteLock { order.withValue { $0.append("writer") } }
        }
        #expect(wait(for: writerStarting))
        // Polled from this thread, neither the reader nor the writer: readers still get in
        // until the writer starts waiting, and from then on must not.
        #expect(
            eventually { lock.tryWithReadLock {} == nil },
            "tryWithReadLock kept succeeding while a writer waited")
        #expect(waitUntilParked(writerID.get()))

        let newReaderIDs = Locked<[String?]>([])
        let newReadersStarting = DispatchSemaphore(value: 0)
        let newReaders = (0..<2).map { _ in
            startThread {
                newReaderIDs.withValue { $0.append(currentKernelThreadID()) }
                newReadersStarting.signal()
                lock.withReadLock { order.withValue { $0.append("reader") } }
            }
        }
        #expect(wait(for: newReadersStarting) && wait(for: newReadersStarting))
        // Parked inside withReadLock, not merely about to call it: only then does the order
        // below say something about the lock.
        for id in newReaderIDs.get() {
            #expect(waitUntilParked(id), "a new reader did not wait behind the waiting writer")
        }
        #expect(lock.tryWithReadLock {} == nil)
        #expect(order.get().isEmpty)

        #expect(firstReader.releaseAndJoin())
        #expect(writer.join())
        for reader in newReaders { #expect(reader.join()) }
        #expect(order.get() == ["writer", "reader", "reader"])
    }

    // MARK: Errors

    @Test("An error thrown in any of the four bodies keeps its type, and the lock is released")
    func bodiesRethrowAndRelease() {
        let lock = ReadWriteLock()
        func expectBoom(_ name: String, _ call: () throws(TestError) -> Void) {
            do {
                try call()
                Issue.record("\(name) returned instead of throwing")
            } catch {
                let thrown: TestError = error
                #expect(thrown == .boom)
            }
            // A write lock from another thread needs every read and write lock released.
            #expect(runOnAnotherThread { lock.tryWithWriteLock { true } } == true, "\(name) kept the lock")
        }
        expectBoom("withReadLock") { () throws(TestError) in
            try lock.withReadLock { () throws(TestError) -> Void in throw .boom }
        }
        expectBoom("withWriteLock") { () throws(TestError) in
            try lock.withWriteLock { () throws(TestError) -> Void in throw .boom }
        }
        expectBoom("tryWithReadLock") { () throws(TestError) in
            _ = try lock.tryWithReadLock { () throws(TestError) -> Void in throw .boom }
        }
        expectBoom("tryWithWriteLock") { () throws(TestError) in
            _ = try lock.tryWithWriteLock { () throws(TestError) -> Void in throw .boom }
        }
    }
}

/// Sixteen plain `Int`s in raw memory, with no synchronisation of its own: unlike an array, a
/// racing access has no reference count to corrupt, so a lock that fails to exclude shows up
/// as a torn read, not a crash.
private final class Fields: @unchecked Sendable {
    static let count = 16
    private let storage = UnsafeMutablePointer<Int>.allocate(capacity: Fields.count)

    init() {
        storage.initialize(repeating: 0, count: Self.count)
    }

    deinit {
        storage.deallocate()
    }

    subscript(index: Int) -> Int {
        get { storage[index] }
        set { storage[index] = newValue }
    }

    var all: [Int] {
        Array(UnsafeBufferPointer(start: storage, count: Self.count))
    }
}
