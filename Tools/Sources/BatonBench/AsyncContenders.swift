import BatonLocks
import BatonTesting
import Dispatch
import Foundation

/// The semaphore people write by hand for tasks: an actor with a count and a queue of
/// continuations. (It ignores cancellation, as most hand-written ones do.)
actor ActorSemaphore {
    private var value: Int
    private var waiters: [CheckedContinuation<Void, Never>] = []

    init(value: Int) {
        self.value = value
    }

    func wait() async {
        if value > 0 {
            value -= 1
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    func signal() {
        if waiters.isEmpty {
            value += 1
        } else {
            waiters.removeFirst().resume()
        }
    }
}

/// The simplest shared state behind an actor: what "a call into an actor" costs.
actor ActorCounter {
    private(set) var value = 0

    func increment() {
        value += 1
    }
}

/// A counter guarded by whichever lock a contender uses; the lock, not this class, keeps
/// accesses apart.
final class BenchCounter: @unchecked Sendable {
    var value = 0
}

/// What the lazy-value cases compute once: known only at run time, as a value worth computing
/// lazily is (a literal `static let` would be folded into a constant and never read).
func lazyValue() -> Int { Int(ProcessInfo.processInfo.processIdentifier) }

/// The value read by the lazy-value cases.
enum LazyReadAnchor {
    /// Swift's own once: a global initialised on first use.
    static let value = lazyValue()
}

/// The lazy value as many write it by hand: an optional behind an `NSLock`.
final class NSLockLazy: @unchecked Sendable {  // `lock` guards `stored`
    private let lock = NSLock()
    private var stored: Int?

    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        if let stored { return stored }
        let made = lazyValue()
        stored = made
        return made
    }
}

// One read per call, of the same kind for every contender of a case (plain calls for `Lazy`,
// async calls for `AsyncLazy`, which can only be read with `await`): a read the optimiser could
// hoist out of the loop (a `static let`) would otherwise measure nothing. Each adds the loop
// index, so that no call can be hoisted either.
@inline(never) func readStaticLet(_ index: Int) -> Int { LazyReadAnchor.value &+ index }
@inline(never) func read(_ lazy: Lazy<Int>, _ index: Int) -> Int { lazy.value &+ index }
@inline(never) func read(_ lazy: NSLockLazy, _ index: Int) -> Int { lazy.value &+ index }
@inline(never) func readStaticLetAsync(_ index: Int) async -> Int { LazyReadAnchor.value &+ index }
@inline(never) func read(_ lazy: AsyncLazy<Int>, _ index: Int) async throws -> Int { try await lazy.value &+ index }
@inline(never) func readAsync(_ lazy: NSLockLazy, _ index: Int) async -> Int { lazy.value &+ index }

/// Runs `body(index)` in `tasks` child tasks of a task started from this (non-pool) thread, and
/// returns the wall time from just before the first child is created until the last is done.
func timeTasks(_ tasks: Int, _ body: @escaping @Sendable (Int) async throws -> Void) -> Duration {
    let done = DispatchSemaphore(value: 0)
    let outcome = Outcome()
    Task.detached {
        let start = ContinuousClock.now
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<tasks { group.addTask { try await body(index) } }
                try await group.waitForAll()
            }
            outcome.set(.success(.now - start))
        } catch {
            outcome.set(.failure(error))
        }
        done.signal()
    }
    done.wait()
    switch outcome.get() {
    case .success(let elapsed): return elapsed
    case .failure(let error): fatalError("a bench task threw \(error)")
    case nil: fatalError("a bench task ended without a result")
    }
}

/// The result handed from the timing task to the waiting thread.
private final class Outcome: @unchecked Sendable {  // `lock` guards `result`
    private let lock = NSLock()
    private var result: Result<Duration, any Error>?

    func set(_ result: Result<Duration, any Error>) {
        lock.withLock { self.result = result }
    }

    func get() -> Result<Duration, any Error>? {
        lock.withLock { result }
    }
}

/// The measurements of the async scenario, each returning nanoseconds per operation.
enum AsyncContenders {
    // MARK: semaphore wait + signal

    static func batonSemaphore(tasks: Int, width: Int, operations: Int) -> Double {
        let semaphore = AsyncSemaphore(value: width)
        let perTask = operations / tasks
        let elapsed = timeTasks(tasks) { _ in
            for _ in 0..<perTask {
                try await semaphore.wait()
                semaphore.signal()
            }
        }
        return elapsed.nanoseconds / Double(perTask * tasks)
    }

    static func actorSemaphore(tasks: Int, width: Int, operations: Int) -> Double {
        let semaphore = ActorSemaphore(value: width)
        let perTask = operations / tasks
        let elapsed = timeTasks(tasks) { _ in
            for _ in 0..<perTask {
                await semaphore.wait()
                await semaphore.signal()
            }
        }
        return elapsed.nanoseconds / Double(perTask * tasks)
    }

    /// As `batonSemaphore`, with a timeout that never fires: what the timer of a wait that
    /// suspends costs.
    static func batonSemaphoreTimed(tasks: Int, width: Int, operations: Int) -> Double {
        let semaphore = AsyncSemaphore(value: width)
        let perTask = operations / tasks
        let elapsed = timeTasks(tasks) { _ in
            for _ in 0..<perTask {
                try await semaphore.wait(timeout: .seconds(60))
                semaphore.signal()
            }
        }
        return elapsed.nanoseconds / Double(perTask * tasks)
    }

    // MARK: lock

    static func batonLockUncontended(operations: Int) -> Double {
        let lock = AsyncLock()
        let counter = BenchCounter()  // guarded by `lock`
        let elapsed = timeTasks(1) { _ in
            for _ in 0..<operations { try await lock.withLock { counter.value += 1 } }
        }
        precondition(counter.value == operations, "AsyncLock lost an increment")
        return elapsed.nanoseconds / Double(operations)
    }

    static func actorCall(operations: Int) -> Double {
        let counter = ActorCounter()
        let elapsed = timeTasks(1) { _ in
            for _ in 0..<operations { await counter.increment() }
            let value = await counter.value
            precondition(value == operations, "the actor lost an increment")
        }
        return elapsed.nanoseconds / Double(operations)
    }

    /// Read, `await`, write: the section that an actor alone cannot keep whole.
    static func batonLockAcrossAwait(tasks: Int, operations: Int) -> Double {
        let lock = AsyncLock()
        let counter = BenchCounter()  // guarded by `lock`
        let perTask = operations / tasks
        let elapsed = timeTasks(tasks) { _ in
            for _ in 0..<perTask {
                try await lock.withLock {
                    let read = counter.value
                    await Task.yield()
                    counter.value = read + 1
                }
            }
        }
        precondition(counter.value == perTask * tasks, "AsyncLock lost an update across an await")
        return elapsed.nanoseconds / Double(perTask * tasks)
    }

    /// As `batonLockAcrossAwait`, with a timeout on the wait for the lock that never fires.
    static func batonLockAcrossAwaitTimed(tasks: Int, operations: Int) -> Double {
        let lock = AsyncLock()
        let counter = BenchCounter()  // guarded by `lock`
        let perTask = operations / tasks
        let elapsed = timeTasks(tasks) { _ in
            for _ in 0..<perTask {
                try await lock.withLock(timeout: .seconds(60)) {
                    let read = counter.value
                    await Task.yield()
                    counter.value = read + 1
                }
            }
        }
        precondition(counter.value == perTask * tasks, "AsyncLock lost an update across an await")
        return elapsed.nanoseconds / Double(perTask * tasks)
    }

    static func actorSemaphoreAcrossAwait(tasks: Int, operations: Int) -> Double {
        let semaphore = ActorSemaphore(value: 1)
        let counter = BenchCounter()  // guarded by `semaphore`
        let perTask = operations / tasks
        let elapsed = timeTasks(tasks) { _ in
            for _ in 0..<perTask {
                await semaphore.wait()
                let read = counter.value
                await Task.yield()
                counter.value = read + 1
                await semaphore.signal()
            }
        }
        precondition(counter.value == perTask * tasks, "the actor semaphore lost an update across an await")
        return elapsed.nanoseconds / Double(perTask * tasks)
    }

    // MARK: bounded parallel work

    /// The trivial work of one element: cheap enough that the cost measured is the scheduling.
    @inline(never) static func trivialWork(_ element: Int) -> Int { element &* 2 &+ 1 }

    /// Checks a contender's results: every element's, in order.
    static func checkResults(_ results: [Int], _ count: Int, _ contender: String) {
        precondition(
            results.count == count && results.indices.allSatisfy { results[$0] == trivialWork($0) },
            "\(contender) returned wrong or misordered results")
    }

    static func concurrentMap(elements: Int, width: Int, rounds: Int) -> Double {
        let results = Protected<[Int]>([])
        let elapsed = timeTasks(1) { _ in
            for _ in 0..<rounds {
                let mapped = try await (0..<elements).concurrentMap(maxConcurrency: width) { trivialWork($0) }
                results.write { $0 = mapped }
            }
        }
        checkResults(results.value, elements, "concurrentMap")
        return elapsed.nanoseconds / Double(elements * rounds)
    }

    /// The hand-written version: a child task per element, all added at once, each waiting for
    /// one of `width` permits; results put back in order by index.
    static func taskGroupWithSemaphore(elements: Int, width: Int, rounds: Int) -> Double {
        let results = Protected<[Int]>([])
        let elapsed = timeTasks(1) { _ in
            for _ in 0..<rounds {
                let semaphore = AsyncSemaphore(value: width)
                let mapped = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
                    for element in 0..<elements {
                        group.addTask { try await semaphore.withPermit { (element, trivialWork(element)) } }
                    }
                    var mapped = [Int](repeating: 0, count: elements)
                    for try await (index, value) in group { mapped[index] = value }
                    return mapped
                }
                results.write { $0 = mapped }
            }
        }
        checkResults(results.value, elements, "task group + AsyncSemaphore")
        return elapsed.nanoseconds / Double(elements * rounds)
    }

    /// No bound at all: a child task per element, all running as the pool allows.
    static func unboundedTaskGroup(elements: Int, rounds: Int) -> Double {
        let results = Protected<[Int]>([])
        let elapsed = timeTasks(1) { _ in
            for _ in 0..<rounds {
                let mapped = await withTaskGroup(of: (Int, Int).self) { group in
                    for element in 0..<elements { group.addTask { (element, trivialWork(element)) } }
                    var mapped = [Int](repeating: 0, count: elements)
                    for await (index, value) in group { mapped[index] = value }
                    return mapped
                }
                results.write { $0 = mapped }
            }
        }
        checkResults(results.value, elements, "unbounded task group")
        return elapsed.nanoseconds / Double(elements * rounds)
    }

    // MARK: lazy reads

    static func lazyRead(operations: Int) -> Double {
        let lazy = Lazy { lazyValue() }
        var sum = read(lazy, 0)
        let elapsed = timeOnThisThread {
            for index in 0..<operations { sum &+= read(lazy, index) }
        }
        blackHole(sum)
        return elapsed.nanoseconds / Double(operations)
    }

    static func staticLetRead(operations: Int) -> Double {
        var sum = readStaticLet(0)
        let elapsed = timeOnThisThread {
            for index in 0..<operations { sum &+= readStaticLet(index) }
        }
        blackHole(sum)
        return elapsed.nanoseconds / Double(operations)
    }

    static func nsLockRead(operations: Int) -> Double {
        let lazy = NSLockLazy()
        var sum = read(lazy, 0)
        let elapsed = timeOnThisThread {
            for index in 0..<operations { sum &+= read(lazy, index) }
        }
        blackHole(sum)
        return elapsed.nanoseconds / Double(operations)
    }

    /// Reads in a task, as async code reads an `AsyncLazy` (the anchors are read in a task too).
    static func asyncLazyRead(operations: Int) -> Double {
        let lazy = AsyncLazy { lazyValue() }
        let elapsed = timeTasks(1) { _ in
            var sum = try await read(lazy, 0)
            for index in 0..<operations { sum &+= try await read(lazy, index) }
            blackHole(sum)
        }
        return elapsed.nanoseconds / Double(operations)
    }

    /// Reads written inline in an async loop, as `try await lazy.value` is usually written: the
    /// getter's fast path is inlined, so no call is made. (A `static let` read inline would be
    /// hoisted out of the loop, so it is not measured this way.)
    static func asyncLazyReadInline(operations: Int) -> Double {
        let lazy = AsyncLazy { lazyValue() }
        let elapsed = timeTasks(1) { _ in
            var sum = try await lazy.value
            for index in 0..<operations { sum &+= try await lazy.value &+ index }
            blackHole(sum)
        }
        return elapsed.nanoseconds / Double(operations)
    }

    static func nsLockReadInline(operations: Int) -> Double {
        let lazy = NSLockLazy()
        let elapsed = timeTasks(1) { _ in
            var sum = lazy.value
            for index in 0..<operations { sum &+= lazy.value &+ index }
            blackHole(sum)
        }
        return elapsed.nanoseconds / Double(operations)
    }

    static func staticLetReadInTask(operations: Int) -> Double {
        let elapsed = timeTasks(1) { _ in
            var sum = await readStaticLetAsync(0)
            for index in 0..<operations { sum &+= await readStaticLetAsync(index) }
            blackHole(sum)
        }
        return elapsed.nanoseconds / Double(operations)
    }

    static func nsLockReadInTask(operations: Int) -> Double {
        let lazy = NSLockLazy()
        let elapsed = timeTasks(1) { _ in
            var sum = await readAsync(lazy, 0)
            for index in 0..<operations { sum &+= await readAsync(lazy, index) }
            blackHole(sum)
        }
        return elapsed.nanoseconds / Double(operations)
    }

    // MARK: rate limiter

    /// `tasks` tasks take one permit at a time from a limiter of `permitsPerSecond` for
    /// `duration`; returns the rate granted ÷ the rate configured. The bucket starts full, so its
    /// burst is left out: the limiter grants at most `burst + rate × t` by time `t`, and the
    /// ratio is what was granted beyond the burst ÷ `rate × t`, `t` the last grant's time.
    static func rateLimiterRate(permitsPerSecond: Int, over duration: Duration, tasks: Int) -> Double {
        // 10 ms of permits: a timer woken late grants what accrued meanwhile instead of losing
        // it at the brim.
        let burst = max(1, permitsPerSecond / 100)
        let limiter = RateLimiter(permits: permitsPerSecond, per: .seconds(1), burst: burst)
        let start = ContinuousClock.now
        let end = start + duration
        let granted = Protected((count: 0, last: start))
        _ = timeTasks(tasks) { _ in
            while ContinuousClock.now < end {
                try await limiter.acquire()
                let now = ContinuousClock.now
                granted.write {
                    $0.count += 1
                    $0.last = max($0.last, now)
                }
            }
        }
        let (count, last) = granted.value
        let elapsed = start.duration(to: last)
        return Double(count - burst) / (Double(permitsPerSecond) * elapsed.nanoseconds / 1e9)
    }
}
