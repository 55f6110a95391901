import Dispatch
import Foundation
import Testing

@testable import BatonCache

@Suite("Eviction handlers and callbacks")
struct EvictionHandlerTests {
    @Test(
        "an eviction handler that reads and writes the same cache does not deadlock",
        arguments: [EvictionPolicy.sieve, .lru, .tinyLFU])
    func reentrantHandler(policy: EvictionPolicy) async {
        let cache = MemoryCache<Int, Int>(countLimit: 8, policy: policy, shardCount: 2)
        let log = EvictionLog<Int, Int>()
        // Unowned: a handler that held its cache would keep it alive for ever.
        cache.onEviction { [unowned cache] key, value, reason in
            log.record(key, value, reason)
            // Read, write, remove and inspect the same cache from inside the handler. Writes of
            // negative keys evict too, which calls this handler again; they stop there.
            _ = cache[key]
            _ = cache.count
            _ = cache.statistics
            if key >= 0 {
                cache[-key - 1] = value
                cache.removeValue(forKey: -key - 1)
            }
        }
        let finished = await finishes {
            for key in 0..<200 { cache[key] = key }
            cache.trim(toCount: 2)
            cache.removeAll()
        }
        #expect(finished, "a cache call inside an eviction handler deadlocked")
        #expect(cache.count == 0)
        #expect(log.keys.contains(199))
        #expect(cache.invariantViolations().isEmpty)
    }

    @Test("handlers run after the lock is released: while one runs, another thread uses the same shard")
    func handlerRunsOutsideTheLock() async {
        let cache = MemoryCache<Int, Int>(countLimit: 1, shardCount: 1)
        let handlerEntered = DispatchSemaphore(value: 0)
        let otherThreadDone = DispatchSemaphore(value: 0)
        let sawOtherThread = CallCounter()
        cache.onEviction { key, _, _ in
            guard key == 1 else { return }
            handlerEntered.signal()
            // If the shard's lock were still held here, the other thread's write would block
            // and this wait would time out.
            if otherThreadDone.wait(timeout: .now() + 30) == .success { sawOtherThread.increment() }
        }
        cache[1] = 1
        let finished = await raceThreads(
            [
                { cache[2] = 2 },  // evicts 1: the handler waits for the other thread
                {
                    handlerEntered.wait()
                    cache[3] = 3  // the same shard: evicts 2
                    _ = cache[3]
                    otherThreadDone.signal()
                },
            ], timeout: .seconds(60))
        #expect(finished)
        #expect(sawOtherThread.value == 1)
        #expect(cache[3] == 3)
    }

    @Test("evicted values are released after the lock is dropped, where the cache is usable")
    func valuesReleasedOutsideTheLock() async {
        let cache = MemoryCache<Int, DeinitProbe>(countLimit: 1, shardCount: 1)
        let reads = CallCounter()
        let finished = await finishes {
            cache[1] = DeinitProbe {
                // Runs when the evicted value is released: the cache must not be locked.
                _ = cache[2]
                reads.increment()
            }
            cache[2] = DeinitProbe {}
        }
        #expect(finished, "a value's deinit ran inside the cache's lock")
        #expect(reads.value == 1)
    }

    @Test("completion handlers run on the queue passed, with the result of the operation")
    func completionHandlers() async {
        let cache = MemoryCache<String, Int>()
        let queue = DispatchQueue(label: "cache-callbacks")
        let marker = DispatchSpecificKey<Int>()
        queue.setSpecific(key: marker, value: 1)
        let log = EvictionLog<String, Int>()
        let done = DispatchSemaphore(value: 0)
        cache.setValue(5, forKey: "k", on: queue) {
            log.record("set", DispatchQueue.getSpecific(key: marker) ?? 0, .replaced)
            done.signal()
        }
        cache.value(forKey: "k", on: queue) { value in
            log.record("get", (value ?? -1) * 10 + (DispatchQueue.getSpecific(key: marker) ?? 0), .replaced)
            done.signal()
        }
        cache.removeValue(forKey: "k", on: queue) { value in
            log.record("remove", (value ?? -1) * 10 + (DispatchQueue.getSpecific(key: marker) ?? 0), .removed)
            done.signal()
        }
        cache.value(forKey: "k") { value in  // default: a global queue
            log.record("miss", value ?? -1, .removed)
            done.signal()
        }
        #expect(await wait(for: done, count: 4))
        let byKey = Dictionary(uniqueKeysWithValues: log.entries.map { ($0.key, $0.value) })
        #expect(byKey == ["set": 1, "get": 51, "remove": 51, "miss": -1])
    }
}

/// Calls `onDeinit` when released.
final class DeinitProbe: Sendable {
    let onDeinit: @Sendable () -> Void
    init(_ onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
    deinit { onDeinit() }
}
