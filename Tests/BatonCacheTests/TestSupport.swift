import Atomics
import BatonCache
import BatonInternals
import BatonTesting
import Dispatch
import Foundation

/// A clock the test moves by hand, so expiry is tested without sleeping. An atomic, so that
/// racing threads can read it without queueing on a lock.
final class ManualClock: Sendable {
    private let nanoseconds = ManagedAtomic<Int64>(0)

    var cacheClock: CacheClock { CacheClock { self.now } }

    var now: Duration { .nanoseconds(nanoseconds.load(ordering: .relaxed)) }

    func advance(by duration: Duration) {
        nanoseconds.wrappingIncrement(by: duration.wholeNanoseconds, ordering: .relaxed)
    }
}

/// Collects what eviction handlers receive, in order.
final class EvictionLog<Key: Sendable, Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var records: [(key: Key, value: Value, reason: EvictionReason)] = []  // guarded by `lock`

    func record(_ key: Key, _ value: Value, _ reason: EvictionReason) {
        lock.lock()
        records.append((key, value, reason))
        lock.unlock()
    }

    var entries: [(key: Key, value: Value, reason: EvictionReason)] {
        lock.lock()
        defer { lock.unlock() }
        return records
    }

    var keys: [Key] { entries.map(\.key) }
    var reasons: [EvictionReason] { entries.map(\.reason) }

    func attach(to cache: MemoryCache<Key, Value>) where Key: Hashable {
        cache.onEviction { key, value, reason in self.record(key, value, reason) }
    }

    /// A new log, attached to `cache`.
    static func attached(to cache: MemoryCache<Key, Value>) -> EvictionLog where Key: Hashable {
        let log = EvictionLog()
        log.attach(to: cache)
        return log
    }
}

/// Runs each body on its own thread, releases them together from a start barrier, and waits
/// for all of them. Returns `false` if they did not all finish within `timeout`.
///
/// The waiting happens on a thread of its own, so no thread of the concurrency pool is
/// blocked meanwhile (other tests keep running, and so do tasks the bodies start).
func raceThreads(_ bodies: [@Sendable () -> Void], timeout: Duration = .seconds(120)) async -> Bool {
    await waitOnThread {
        let threads = GatedThreads(count: bodies.count) { bodies[$0]() }
        threads.open()
        return threads.join(timeout: timeout) == 0
    }
}

/// Runs the blocking `wait` on a thread of its own and returns its result.
func waitOnThread(_ wait: @escaping @Sendable () -> Bool) async -> Bool {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: wait()) }.start()
    }
}

/// Waits until `semaphore` has been signalled `count` times, or `timeout` passes.
///
/// The default is generous: a task the cache starts (a get-or-insert's computation) joins the
/// back of the cooperative pool's queue, behind every test the parallel run has started, and
/// on a 2-core machine that queue took over 60 s to drain.
func wait(for semaphore: DispatchSemaphore, count: Int = 1, timeout: DispatchTimeInterval = .seconds(120)) async -> Bool
{
    await waitOnThread {
        let deadline = DispatchTime.now() + timeout
        for _ in 0..<count where semaphore.wait(timeout: deadline) == .timedOut { return false }
        return true
    }
}

/// Runs `body` on another thread and returns whether it finished within `timeout` (a hang,
/// such as a deadlock, fails the test instead of stopping the run).
func finishes(within timeout: Duration = .seconds(30), _ body: @escaping @Sendable () -> Void) async -> Bool {
    await raceThreads([body], timeout: timeout)
}
