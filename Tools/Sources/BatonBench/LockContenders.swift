import Atomics
import BatonLocks
import BatonTesting
import Dispatch
import Foundation
import Synchronization

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A `[Int: Int]` shared by threads, guarded one way or another: the subject of the
/// readers-writers experiment.
protocol SharedDictionary: AnyObject, Sendable {
    init(_ initial: [Int: Int])
    /// Runs `body` on the dictionary under the contender's read (or only) lock.
    func withRead<Result>(_ body: ([Int: Int]) -> Result) -> Result
    func write(_ key: Int, _ value: Int)
}

extension SharedDictionary {
    /// One value: the short read section.
    func read(_ key: Int) -> Int? { withRead { $0[key] } }

    /// The sum of `span` consecutive keys from `key` on: a longer read section, as when a
    /// reader walks part of a shared table.
    func readSpan(from key: Int, _ span: Int) -> Int {
        withRead { dictionary in
            var sum = 0
            for offset in 0..<span { sum &+= dictionary[(key &+ offset) & (dictionarySize - 1)] ?? 0 }
            return sum
        }
    }
}

// Each class below guards `dictionary` with the lock or queue it is named after, which makes
// the @unchecked Sendable conformances true. The lock, not the runtime's exclusivity check,
// keeps accesses apart, so every contender skips that check (as Protected and Mutex do).

final class NSLockDictionary: SharedDictionary, @unchecked Sendable {
    private let lock = NSLock()
    @exclusivity(unchecked) private var dictionary: [Int: Int]
    init(_ initial: [Int: Int]) { dictionary = initial }
    func withRead<Result>(_ body: ([Int: Int]) -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body(dictionary)
    }
    func write(_ key: Int, _ value: Int) {
        lock.lock()
        dictionary[key] = value
        lock.unlock()
    }
}

final class PthreadMutexDictionary: SharedDictionary, @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @exclusivity(unchecked) private var dictionary: [Int: Int]
    init(_ initial: [Int: Int]) {
        dictionary = initial
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }
    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }
    func withRead<Result>(_ body: ([Int: Int]) -> Result) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body(dictionary)
    }
    func write(_ key: Int, _ value: Int) {
        pthread_mutex_lock(mutex)
        dictionary[key] = value
        pthread_mutex_unlock(mutex)
    }
}

final class PthreadRWLockDictionary: SharedDictionary, @unchecked Sendable {
    private let rwlock: UnsafeMutablePointer<pthread_rwlock_t>
    @exclusivity(unchecked) private var dictionary: [Int: Int]
    init(_ initial: [Int: Int]) {
        dictionary = initial
        rwlock = .allocate(capacity: 1)
        rwlock.initialize(to: pthread_rwlock_t())
        pthread_rwlock_init(rwlock, nil)
    }
    deinit {
        pthread_rwlock_destroy(rwlock)
        rwlock.deallocate()
    }
    func withRead<Result>(_ body: ([Int: Int]) -> Result) -> Result {
        pthread_rwlock_rdlock(rwlock)
        defer { pthread_rwlock_unlock(rwlock) }
        return body(dictionary)
    }
    func write(_ key: Int, _ value: Int) {
        pthread_rwlock_wrlock(rwlock)
        dictionary[key] = value
        pthread_rwlock_unlock(rwlock)
    }
}

@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
final class StdlibMutexDictionary: SharedDictionary, Sendable {
    private let mutex: Mutex<[Int: Int]>
    init(_ initial: [Int: Int]) { mutex = Mutex(initial) }
    func withRead<Result>(_ body: ([Int: Int]) -> Result) -> Result { mutex.withLock { body($0) } }
    func write(_ key: Int, _ value: Int) { mutex.withLock { $0[key] = value } }
}

final class BarrierQueueDictionary: SharedDictionary, @unchecked Sendable {
    private let queue = DispatchQueue(label: "bench.barrier", attributes: .concurrent)
    @exclusivity(unchecked) private var dictionary: [Int: Int]
    init(_ initial: [Int: Int]) { dictionary = initial }
    func withRead<Result>(_ body: ([Int: Int]) -> Result) -> Result { queue.sync { body(dictionary) } }
    func write(_ key: Int, _ value: Int) { queue.sync(flags: .barrier) { dictionary[key] = value } }
}

final class SerialQueueDictionary: SharedDictionary, @unchecked Sendable {
    private let queue = DispatchQueue(label: "bench.serial")
    @exclusivity(unchecked) private var dictionary: [Int: Int]
    init(_ initial: [Int: Int]) { dictionary = initial }
    func withRead<Result>(_ body: ([Int: Int]) -> Result) -> Result { queue.sync { body(dictionary) } }
    func write(_ key: Int, _ value: Int) { queue.sync { dictionary[key] = value } }
}

final class BatonLockDictionary: SharedDictionary, @unchecked Sendable {
    private let lock = Lock()
    @exclusivity(unchecked) private var dictionary: [Int: Int]
    init(_ initial: [Int: Int]) { dictionary = initial }
    func withRead<Result>(_ body: ([Int: Int]) -> Result) -> Result { lock.withLock { body(dictionary) } }
    func write(_ key: Int, _ value: Int) { lock.withLock { dictionary[key] = value } }
}

final class BatonReadWriteLockDictionary: SharedDictionary, @unchecked Sendable {
    private let lock = ReadWriteLock()
    @exclusivity(unchecked) private var dictionary: [Int: Int]
    init(_ initial: [Int: Int]) { dictionary = initial }
    func withRead<Result>(_ body: ([Int: Int]) -> Result) -> Result { lock.withReadLock { body(dictionary) } }
    func write(_ key: Int, _ value: Int) { lock.withWriteLock { dictionary[key] = value } }
}

final class BatonProtectedDictionary: SharedDictionary, Sendable {
    private let protected: Protected<[Int: Int]>
    init(_ initial: [Int: Int]) { protected = Protected(initial) }
    func withRead<Result>(_ body: ([Int: Int]) -> Result) -> Result { protected.read { body($0) } }
    func write(_ key: Int, _ value: Int) { protected.write { $0[key] = value } }
}

/// A contender of the locks scenario: a name and a way to measure a mix with its dictionary.
struct LockContender: Sendable {
    let name: String
    let baton: Bool
    /// Slow contenders run this fraction of the single-thread cases' operations so a full run
    /// stays within minutes; the reported figure is per operation either way. (The mixes give
    /// every contender the same count, under a time cap.)
    let share: Double
    let measure:
        @Sendable (_ writers: Int, _ readers: Int, _ readSpan: Int, _ operations: Int, _ cap: Duration) -> Double
    let measureUncontended: @Sendable (_ write: Bool, _ operations: Int) -> Double

    init<D: SharedDictionary>(_ name: String, baton: Bool = false, share: Double = 1, _ type: D.Type) {
        self.name = name
        self.baton = baton
        self.share = share
        measure = { writers, readers, readSpan, operations, cap in
            measureMix(D.self, writers: writers, readers: readers, readSpan: readSpan, operations: operations, cap: cap)
        }
        measureUncontended = { write, operations in
            measureSingleThread(D.self, write: write, operations: operations)
        }
    }

    static var all: [LockContender] {
        var contenders = [
            LockContender("NSLock", NSLockDictionary.self),
            LockContender("pthread_mutex", PthreadMutexDictionary.self),
            LockContender("pthread_rwlock", PthreadRWLockDictionary.self),
        ]
        if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
            contenders.append(LockContender("Synchronization.Mutex", share: 0.1, StdlibMutexDictionary.self))
        }
        contenders += [
            LockContender("GCD concurrent+barrier", share: 0.05, BarrierQueueDictionary.self),
            LockContender("GCD serial queue", share: 0.1, SerialQueueDictionary.self),
            LockContender("Lock", baton: true, BatonLockDictionary.self),
            LockContender("ReadWriteLock", baton: true, BatonReadWriteLockDictionary.self),
            LockContender("Protected", baton: true, BatonProtectedDictionary.self),
        ]
        return contenders
    }
}

/// The shared dictionary's size: 1,024 keys, all present before the run, so writes replace
/// values and never grow the table.
let dictionarySize = 1024
private let keysPerThread = 4096

private func initialDictionary() -> [Int: Int] {
    Dictionary(uniqueKeysWithValues: (0..<dictionarySize).map { ($0, $0) })
}

private func randomKeys(seed: UInt64) -> [Int] {
    var generator = SeededGenerator(seed: seed)
    return (0..<keysPerThread).map { _ in Int.random(in: 0..<dictionarySize, using: &generator) }
}

/// Mean wall time per operation, in nanoseconds, with `writers` + `readers` threads each doing
/// `operations` random writes or reads on one shared dictionary, stopped early if they are not
/// done within `cap`; a read looks up one key, or sums `readSpan` consecutive keys when that is
/// above 1.
///
/// Every contender gets the same count, so every contender's threads overlap as they would in
/// a program (a slow lock given fewer operations, to keep the run short, would finish each
/// thread's share within one time slice, never meet the other threads, and never collapse).
/// A lock too slow to finish within `cap` is stopped there and measured by the operations its
/// threads did: the run stays short and the figure is that lock's, under full contention.
private func measureMix<D: SharedDictionary>(
    _ type: D.Type, writers: Int, readers: Int, readSpan: Int, operations: Int, cap: Duration
) -> Double {
    let shared = D(initialDictionary())
    let stop = ManagedAtomic(false)
    let threads = writers + readers
    let done = LockedResults(threads)
    var bodies: [@Sendable () -> Void] = []
    for index in 0..<threads {
        let keys = randomKeys(seed: UInt64(index + 1))
        bodies.append {
            var completed = 0
            var sum = 0
            // The flag is read once per batch, so that checking it costs nothing measurable.
            while completed < operations && !stop.load(ordering: .relaxed) {
                for step in completed..<min(operations, completed + operationBatch) {
                    let key = keys[step & (keysPerThread - 1)]
                    if index < writers {
                        shared.write(key, step)
                    } else if readSpan > 1 {
                        sum &+= shared.readSpan(from: key, readSpan)
                    } else {
                        sum &+= shared.read(key) ?? 0
                    }
                }
                completed = min(operations, completed + operationBatch)
            }
            blackHole(sum)
            done.store(completed, at: index)
        }
    }
    let elapsed = raceThreads(bodies, cap: cap, stop: stop)
    return elapsed.nanoseconds / Double(max(1, done.values.reduce(0, +)))
}

/// Operations between two reads of the stop flag.
private let operationBatch = 16

/// Time per operation, in nanoseconds, of one thread alone reading or writing.
private func measureSingleThread<D: SharedDictionary>(_ type: D.Type, write: Bool, operations: Int) -> Double {
    let shared = D(initialDictionary())
    let keys = randomKeys(seed: 99)
    var sum = 0
    let elapsed = timeOnThisThread {
        if write {
            for i in 0..<operations { shared.write(keys[i & (keysPerThread - 1)], i) }
        } else {
            for i in 0..<operations { sum &+= shared.read(keys[i & (keysPerThread - 1)]) ?? 0 }
        }
    }
    blackHole(sum)
    return elapsed.nanoseconds / Double(operations)
}
