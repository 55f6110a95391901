import Atomics
import Dispatch
import Foundation
import Testing

@testable import BatonCache

/// Operations read the clock before they take a shard's lock, so a time can be stale by the
/// time it is used. Stale times must never make an entry expire early, nor may a lock taken
/// for a limit change be held while eviction handlers run.
@Suite("Stale clock readings and handlers during limit changes")
struct StaleClockTests {
    /// A reader reads the clock (0 µs) and stalls before the lock; meanwhile the key is
    /// written again at 1000 µs. The reader then finds the new value: stamping its stale time
    /// as the entry's last read would make the entry, written and read just now, idle for
    /// 1000 µs and so expired at once.
    @Test(
        "A read with a stale time does not move an entry's last read back",
        .timeLimit(.minutes(1)), arguments: [EvictionPolicy.sieve, .lru, .tinyLFU])
    func staleReadDoesNotExpireAFreshEntry(policy: EvictionPolicy) async {
        let manual = ManualClock()
        let stall = StallingClock(manual)
        let cache = MemoryCache<String, Int>(
            timeToIdle: .microseconds(250), policy: policy, clock: stall.cacheClock)
        cache.holdBackgroundSweep()
        let log = EvictionLog.attached(to: cache)
        cache["k"] = 1
        stall.armForNextRead()
        let read = ManagedAtomic(0)
        let reader = Thread { read.store(cache["k"] ?? -1, ordering: .relaxed) }
        reader.start()
        #expect(await wait(for: stall.reached))
        manual.advance(by: .microseconds(1_000))
        cache["k"] = 2
        stall.release.signal()
        #expect(await waitOnThread { eventually { read.load(ordering: .relaxed) != 0 } })
        #expect(read.load(ordering: .relaxed) == 2)
        #expect(cache.peek("k") == 2)
        #expect(cache["k"] == 2)
        // Only the old value expired: idle from 0 µs until it was replaced at 1000 µs.
        #expect(log.entries.map(\.value) == [1])
        #expect(log.reasons == [.expired])
    }

    @Test("An eviction handler may set a limit while a lowered limit evicts", .timeLimit(.minutes(1)))
    func handlerSetsALimitDuringALowering() async {
        let cache = MemoryCache<Int, Int>(countLimit: 100, shardCount: 1)
        for key in 0..<100 { cache[key] = key }
        let nested = ManagedAtomic(0)
        // Unowned: a handler that held its cache would keep it alive for ever.
        cache.onEviction { [unowned cache] _, _, _ in
            if nested.loadThenWrappingIncrement(ordering: .relaxed) == 0 { cache.costLimit = 1_000 }
        }
        #expect(await finishes { cache.countLimit = 10 })
        #expect(cache.count == 10)
        #expect(cache.costLimit == 1_000)
        #expect(nested.load(ordering: .relaxed) == 90)
    }
}

/// A clock that, once armed, stalls the next caller after it has read the time: the caller
/// holds a time that goes stale while the test acts.
final class StallingClock: Sendable {
    private let manual: ManualClock
    private let armed = ManagedAtomic(false)
    let reached = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)

    init(_ manual: ManualClock) { self.manual = manual }

    var cacheClock: CacheClock {
        CacheClock {
            let now = self.manual.now
            if self.armed.exchange(false, ordering: .relaxed) {
                self.reached.signal()
                self.release.wait()
            }
            return now
        }
    }

    func armForNextRead() { armed.store(true, ordering: .relaxed) }
}
