import BatonLocks
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

/// The value read by the lazy-value cases.
enum LazyReadAnchor {
    /// Swift's own once: a global initialised on first use.
    static let value = 42
}

/// The lazy value as many write it by hand: an optional behind an `NSLock`.
final class NSLockLazy: @unchecked Sendable {  // `lock` guards `stored`
    private let lock = NSLock()
    private var stored: Int?
    private let make: @Sendable () -> Int

    init(_ make: @escaping @Sendable () -> Int) {
        self.make = make
    }

    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        if let stored { return stored }
        let made = make()
        stored = made
        return made
    }
}

// One read per call, for every contender: a read that the optimiser could hoist out of a loop
// (a `static let`) would otherwise measure nothing.
@inline(never) func readStaticLet() -> Int { LazyReadAnchor.value }
@inline(never) func read(_ lazy: Lazy<Int>) -> Int { lazy.value }
@inline(never) func read(_ lazy: NSLockLazy) -> Int { lazy.value }
@inline(never) func read(_ lazy: AsyncLazy<Int>) async throws -> Int { try await lazy.value }

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

    // MARK: lazy reads

    static func lazyRead(operations: Int) -> Double {
        let lazy = Lazy { 42 }
        var sum = read(lazy)
        let elapsed = timeOnThisThread {
            for _ in 0..<operations { sum &+= read(lazy) }
        }
        blackHole(sum)
        return elapsed.nanoseconds / Double(operations)
    }

    static func staticLetRead(operations: Int) -> Double {
        var sum = readStaticLet()
        let elapsed = timeOnThisThread {
            for _ in 0..<operations { sum &+= readStaticLet() }
        }
        blackHole(sum)
        return elapsed.nanoseconds / Double(operations)
    }

    static func nsLockRead(operations: Int) -> Double {
        let lazy = NSLockLazy { 42 }
        var sum = read(lazy)
        let elapsed = timeOnThisThread {
            for _ in 0..<operations { sum &+= read(lazy) }
        }
        blackHole(sum)
        return elapsed.nanoseconds / Double(operations)
    }

    /// Reads in a task, as async code reads an `AsyncLazy` (the anchors are read in a task too).
    static func asyncLazyRead(operations: Int) -> Double {
        let lazy = AsyncLazy { 42 }
        let elapsed = timeTasks(1) { _ in
            var sum = try await read(lazy)
            for _ in 0..<operations { sum &+= try await read(lazy) }
            blackHole(sum)
        }
        return elapsed.nanoseconds / Double(operations)
    }

    static func staticLetReadInTask(operations: Int) -> Double {
        let elapsed = timeTasks(1) { _ in
            var sum = readStaticLet()
            for _ in 0..<operations { sum &+= readStaticLet() }
            blackHole(sum)
        }
        return elapsed.nanoseconds / Double(operations)
    }

    static func nsLockReadInTask(operations: Int) -> Double {
        let lazy = NSLockLazy { 42 }
        let elapsed = timeTasks(1) { _ in
            var sum = read(lazy)
            for _ in 0..<operations { sum &+= read(lazy) }
            blackHole(sum)
        }
        return elapsed.nanoseconds / Double(operations)
    }
}
