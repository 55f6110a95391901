import BatonFutures
import BatonTesting
import Dispatch
import Foundation

/// The measurements of the futures scenario, one method per (case, contender), but for NIO's
/// (``NIOFutureAnchor``). Each returns nanoseconds per future (or per map), or milliseconds for
/// the fail-fast case.
final class FutureContenders: Sendable {
    // MARK: create + observe + resolve

    func batonSingle(_ count: Int) throws -> Double {
        let sink = Sink()
        let elapsed = timeOnThisThread {
            for index in 0..<count {
                let promise = Promise<Int>()
                promise.future.whenComplete { sink.add($0) }
                promise.succeed(index)
            }
        }
        try sink.expect(count)
        return elapsed.nanoseconds / Double(count)
    }

    // MARK: all

    func batonAll(_ count: Int, async: Bool) throws -> Double {
        let queue = DispatchQueue.global()
        var values: [Int] = []
        let elapsed = try timeOnThisThread {
            let futures = (0..<count).map { index in
                async ? Future<Int> { promise in queue.async { promise.succeed(index) } } : .succeeded(index)
            }
            values = try Future.all(futures).wait()
        }
        try checkInOrder(values, count)
        return elapsed.nanoseconds / Double(count)
    }

    /// `Future.all` alone: the inputs are made before the clock starts and freed after it stops.
    func batonJoin(_ count: Int) throws -> Double {
        let futures = (0..<count).map { Future<Int>.succeeded($0) }
        var values: [Int] = []
        let elapsed = try timeOnThisThread { values = try Future.all(futures).wait() }
        try checkInOrder(values, count)
        return elapsed.nanoseconds / Double(count)
    }

    /// Making and freeing one small object per input, stored in an array as the futures are.
    func allocationFloor(_ count: Int) -> Double {
        var sum = 0
        let elapsed = timeOnThisThread {
            let inputs = (0..<count).map { InputBox($0) }
            for input in inputs { sum &+= input.value }
        }
        precondition(sum == (0..<count).reduce(0, &+), "the allocation floor lost an input")
        return elapsed.nanoseconds / Double(count)
    }

    func dispatchGroupAll(_ count: Int, async: Bool) -> Double {
        let queue = DispatchQueue.global()
        let results = LockedResults(count)
        let elapsed = timeOnThisThread {
            let group = DispatchGroup()
            for index in 0..<count {
                group.enter()
                if async {
                    queue.async {
                        results.store(index, at: index)
                        group.leave()
                    }
                } else {
                    results.store(index, at: index)
                    group.leave()
                }
            }
            group.wait()
        }
        precondition(results.values == Array(0..<count), "DispatchGroup fan-out lost a result")
        return elapsed.nanoseconds / Double(count)
    }

    func taskGroupAll(_ count: Int) -> Double {
        let done = DispatchSemaphore(value: 0)
        let outcome = LockedResults(1)
        let start = ContinuousClock.now
        Task {
            let values = await withTaskGroup(of: (Int, Int).self) { group in
                for index in 0..<count { group.addTask { (index, index) } }
                var values = [Int](repeating: 0, count: count)
                for await (index, value) in group { values[index] = value }
                return values
            }
            outcome.store(values == Array(0..<count) ? 1 : -1, at: 0)
            done.signal()
        }
        done.wait()
        let elapsed = ContinuousClock.now - start
        precondition(outcome.values == [1], "TaskGroup lost a result")
        return elapsed.nanoseconds / Double(count)
    }

    // MARK: chain of maps

    func batonChain(_ count: Int) throws -> Double {
        var last: Future<Int>?
        let elapsed = timeOnThisThread {
            let root = Promise<Int>()
            var future = root.future
            for _ in 0..<count { future = future.map { $0 + 1 } }
            root.succeed(0)
            last = future
        }
        guard try last?.result?.get() == count else { throw BenchFailure("the map chain did not complete") }
        return elapsed.nanoseconds / Double(count)
    }

    // MARK: fail fast

    /// A callback API that takes `delay` and cannot be cancelled (like most completion-handler APIs).
    private static func after(_ delay: Duration, _ body: @escaping @Sendable () -> Void) {
        DispatchQueue.global().asyncAfter(deadline: .now() + delay.seconds, execute: body)
    }

    func batonFailFast(slow: Duration, fail: Duration, all: Bool) -> Double {
        let reported = DispatchSemaphore(value: 0)
        let start = ContinuousClock.now
        let slowFuture = Future<Int> { promise in Self.after(slow) { promise.succeed(1) } }
        let failing = Future<Int> { promise in Self.after(fail) { promise.fail(BenchFailure("failed")) } }
        let failed = LockedResults(1)
        let combined =
            all ? Future.all([slowFuture, failing]).discardingValue() : zip(slowFuture, failing).discardingValue()
        combined.whenFailure { _ in
            failed.store(1, at: 0)
            reported.signal()
        }
        reported.wait()
        let elapsed = ContinuousClock.now - start
        precondition(failed.values == [1])
        return elapsed.nanoseconds / 1e6
    }

    func asyncLetFailFast(slow: Duration, fail: Duration) -> Double {
        measureAsync {
            async let slowValue = Self.slowOperation(slow)
            async let failingValue = Self.failingOperation(fail)
            _ = try await (slowValue, failingValue)
        }
    }

    func taskGroupFailFast(slow: Duration, fail: Duration) -> Double {
        measureAsync {
            try await withThrowingTaskGroup(of: Int.self) { group in
                group.addTask { await Self.slowOperation(slow) }
                group.addTask { try await Self.failingOperation(fail) }
                for try await _ in group {}
            }
        }
    }

    private static func slowOperation(_ delay: Duration) async -> Int {
        await withCheckedContinuation { continuation in after(delay) { continuation.resume(returning: 1) } }
    }

    private static func failingOperation(_ delay: Duration) async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            after(delay) { continuation.resume(throwing: BenchFailure("failed")) }
        }
    }

    /// Milliseconds until `body` throws, run in a task and waited for on this thread.
    private func measureAsync(_ body: @escaping @Sendable () async throws -> Void) -> Double {
        let done = DispatchSemaphore(value: 0)
        let threw = LockedResults(1)
        let start = ContinuousClock.now
        Task {
            do { try await body() } catch { threw.store(1, at: 0) }
            done.signal()
        }
        done.wait()
        let elapsed = ContinuousClock.now - start
        precondition(threw.values == [1], "the failing operation did not fail the combination")
        return elapsed.nanoseconds / 1e6
    }

}

/// Checks that a combination of `count` futures returned 0..<count in order.
func checkInOrder(_ values: [Int], _ count: Int) throws {
    guard values == Array(0..<count) else { throw BenchFailure("all returned wrong or unordered values") }
}

/// The smallest object an input could be: one word of payload.
final class InputBox {
    let value: Int
    init(_ value: Int) { self.value = value }
}

struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Counts callback results. Each measurement uses it on one thread only (the measuring thread,
/// or the event loop's), and reads it after joining that thread, so it needs no lock: a lock
/// here would add the same cost to every contender and hide the difference being measured.
final class Sink: @unchecked Sendable {
    private var count = 0
    private(set) var last = 0
    func add(_ result: Result<Int, any Error>) {
        count += 1
        if case .success(let value) = result { last = value }
    }
    func expect(_ expected: Int) throws {
        guard count == expected else { throw BenchFailure("expected \(expected) callbacks, saw \(count)") }
    }
}

/// Results stored from many threads under one lock, the way a hand-written fan-out keeps them.
final class LockedResults: @unchecked Sendable {
    private let lock = NSLock()
    /// Guarded by `lock`.
    private var storage: [Int]
    init(_ count: Int) { storage = Array(repeating: 0, count: count) }
    func store(_ value: Int, at index: Int) {
        lock.lock()
        storage[index] = value
        lock.unlock()
    }
    var values: [Int] {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }
}
