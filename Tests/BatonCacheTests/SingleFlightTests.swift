import BatonLocks
import BatonTestSupport
import Foundation
import Testing

@testable import BatonCache

/// Counts calls from concurrent tasks.
final class CallCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var calls = 0  // guarded by `lock`

    func increment() {
        lock.lock()
        calls += 1
        lock.unlock()
    }

    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return calls
    }
}

struct LoaderFailed: Error, Equatable {
    let attempt: Int
}

/// Suspends until `count` callers wait on the flight for `key`, or the deadline passes: the
/// loader holds the flight open so that every caller really does join it.
func waitForWaiters<K, V>(_ cache: MemoryCache<K, V>, key: K, count: Int) async {
    let deadline = ContinuousClock.now + .seconds(30)
    while cache.flights.waiterCount(forKey: key) < count && ContinuousClock.now < deadline {
        try? await Task.sleep(for: .milliseconds(1))
    }
}

@Suite("Single flight", .timeLimit(.minutes(1)))
struct SingleFlightTests {
    static let callers = 100

    /// A caller that saw a flight but reaches `join` after it landed must hear so at once and
    /// look again; it must not wait for a result that will never come.
    @Test("Joining a flight that has already landed throws FlightEnded at once")
    func joiningALandedFlightThrows() async {
        let flights = SingleFlight<String, Int>()
        #expect(flights.lead("k"))
        flights.land("k", with: .success(1))
        for key in ["k", "never led"] {
            // Bounded: a join that waits instead fails here by name.
            let ended = await Task { () -> Bool in
                do {
                    _ = try await flights.join(key)
                    return false
                } catch {
                    return error is SingleFlight<String, Int>.FlightEnded
                }
            }.value(within: 30)
            #expect(ended == true, "joining \(key)")
        }
        #expect(flights.waiterCount(forKey: "k") == 0)
    }

    @Test("100 concurrent callers for one missing key run the loader once and all get its value")
    func sharedComputation() async throws {
        let cache = MemoryCache<String, Int>()
        let loads = CallCounter()
        let values = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<Self.callers {
                group.addTask {
                    try await cache.value(forKey: "answer") {
                        loads.increment()
                        await waitForWaiters(cache, key: "answer", count: Self.callers - 1)
                        return 42
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(loads.value == 1)
        #expect(values.count == Self.callers && values.allSatisfy { $0 == 42 })
        #expect(cache["answer"] == 42)
        #expect(cache.statistics.insertions == 1)
    }

    @Test("a failed computation reaches every waiter and is not cached")
    func sharedFailure() async throws {
        let cache = MemoryCache<String, Int>()
        let loads = CallCounter()
        let errors = await withTaskGroup(of: (any Error)?.self) { group in
            for _ in 0..<Self.callers {
                group.addTask {
                    do {
                        _ = try await cache.value(forKey: "flaky") {
                            loads.increment()
                            await waitForWaiters(cache, key: "flaky", count: Self.callers - 1)
                            throw LoaderFailed(attempt: 1)
                        }
                        return nil
                    } catch {
                        return error
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(loads.value == 1)
        #expect(errors.count == Self.callers)
        #expect(errors.allSatisfy { ($0 as? LoaderFailed) == LoaderFailed(attempt: 1) })
        #expect(cache["flaky"] == nil)
        #expect(cache.count == 0)

        // Not cached: the next caller computes again.
        let value = try await cache.value(forKey: "flaky") {
            loads.increment()
            await Task.yield()
            return 7
        }
        #expect(value == 7 && loads.value == 2)
        #expect(cache["flaky"] == 7)
    }

    @Test("flights for different keys do not wait for each other, and a hit runs no loader")
    func independentKeys() async throws {
        let cache = MemoryCache<Int, Int>()
        cache[0] = 100
        let loads = CallCounter()
        let values = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for key in 0..<10 {
                group.addTask {
                    (
                        key,
                        try await cache.value(forKey: key) {
                            loads.increment()
                            await Task.yield()
                            return key * 10
                        }
                    )
                }
            }
            return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        #expect(loads.value == 9)
        #expect(values[0] == 100)
        for key in 1..<10 { #expect(values[key] == key * 10) }
    }

    @Test("the synchronous get-or-insert runs the loader only on a miss and keeps the first value stored")
    func synchronousGetOrInsert() throws {
        let cache = MemoryCache<String, Int>()
        var calls = 0
        #expect(
            cache.value(forKey: "k") {
                calls += 1
                return 1
            } == 1)
        #expect(
            cache.value(forKey: "k") {
                calls += 1
                return 2
            } == 1)
        #expect(calls == 1)
        #expect(throws: LoaderFailed.self) {
            try cache.value(forKey: "e") { throw LoaderFailed(attempt: 0) }
        }
        #expect(cache["e"] == nil)
        let stats = cache.statistics
        #expect(stats.hits == 1 && stats.misses == 3 && stats.insertions == 1)
    }

    @Test("the completion-handler get-or-insert delivers on the queue it was given")
    func callbackGetOrInsert() async throws {
        let cache = MemoryCache<String, Int>()
        let queue = DispatchQueue(label: "callback-get-or-insert")
        let marker = DispatchSpecificKey<Int>()
        queue.setSpecific(key: marker, value: 7)
        let delivered = DispatchSemaphore(value: 0)
        let outcome = CallbackOutcome()
        cache.value(forKey: "k", orInsert: { 5 }, on: queue) { result in
            outcome.set(try? result.get(), onQueue: DispatchQueue.getSpecific(key: marker) == 7)
            delivered.signal()
        }
        #expect(await wait(for: delivered))
        #expect(outcome.value == 5 && outcome.onQueue)
        #expect(cache["k"] == 5)
    }
}

extension SingleFlightTests {
    @Test("the completion-handler get-or-insert hands make's error to the completion and stores nothing")
    func callbackGetOrInsertFailure() async throws {
        let cache = MemoryCache<String, Int>()
        let delivered = DispatchSemaphore(value: 0)
        let failure = Protected<LoaderFailed?>(nil)
        cache.value(forKey: "k", orInsert: { throw LoaderFailed(attempt: 3) }) { result in
            if case .failure(let error) = result { failure.write { $0 = error as? LoaderFailed } }
            delivered.signal()
        }
        #expect(await wait(for: delivered))
        #expect(failure.value == LoaderFailed(attempt: 3))
        #expect(cache.peek("k") == nil && cache.count == 0)
    }

    /// Every form that stores without a cost given stores at cost 1.
    @Test("a value stored without a cost costs 1, whichever form stores it")
    func defaultCostIsOne() async throws {
        let cache = MemoryCache<String, Int>()
        cache.setValue(1, forKey: "set")
        _ = cache.value(forKey: "sync") { 2 }
        let made: @Sendable () async throws -> Int = { 3 }
        _ = try await cache.value(forKey: "async", orInsert: made)
        let delivered = DispatchSemaphore(value: 0)
        cache.setValue(4, forKey: "callback set") { delivered.signal() }
        cache.value(forKey: "callback make", orInsert: { 5 }) { _ in delivered.signal() }
        #expect(await wait(for: delivered, count: 2))
        #expect(cache.count == 5 && cache.totalCost == 5)
    }

    /// As the synchronous form: a value stored for the key while `make` ran (here by `make`
    /// itself) wins, and the caller gets it.
    @Test("the async get-or-insert returns a value stored while make ran, and keeps it")
    func asyncGetOrInsertKeepsAValueStoredMeanwhile() async throws {
        let cache = MemoryCache<String, Int>()
        let got = try await cache.value(forKey: "k") { () async throws -> Int in
            cache["k"] = 1
            return 2
        }
        #expect(got == 1)
        #expect(cache["k"] == 1)
    }
}

/// What a completion handler saw.
final class CallbackOutcome: @unchecked Sendable {
    private let lock = NSLock()
    private var storedValue: Int?  // guarded by `lock`
    private var storedOnQueue = false  // guarded by `lock`

    func set(_ value: Int?, onQueue: Bool) {
        lock.lock()
        storedValue = value
        storedOnQueue = onQueue
        lock.unlock()
    }

    var value: Int? {
        lock.lock()
        defer { lock.unlock() }
        return storedValue
    }

    var onQueue: Bool {
        lock.lock()
        defer { lock.unlock() }
        return storedOnQueue
    }
}
