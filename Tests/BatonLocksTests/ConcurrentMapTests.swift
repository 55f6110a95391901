import Foundation
import Testing

@testable import BatonLocks

// Most tests run the call and its bodies on a `SettlingExecutor`: the bodies hold on gates the
// test opens one at a time, and after each step the test waits for everything to come to rest
// before it looks, so "exactly this many inside, and nobody else started" is an exact check.

@Suite("concurrentMap, concurrentCompactMap, concurrentForEach", .timeLimit(.minutes(1)))
struct ConcurrentMapTests {
    @Test(
        "Exactly maxConcurrency bodies inside while elements remain, started in order, never more",
        arguments: [1, 2, 3, 5])
    func widthIsReachedAndNeverExceeded(width: Int) async throws {
        let executor = SettlingExecutor()
        let bodies = HeldBodies()
        let source = CountingSequence(count: 12)
        let call = Task(executorPreference: executor) {
            try await source.concurrentMap(maxConcurrency: width) { element in
                try await bodies.hold(element)
                return element * 10
            }
        }
        for released in 0..<12 {
            executor.settle()
            let expected = Array(released..<min(released + width, 12))
            #expect(bodies.held == expected, "after \(released) released")
            #expect(source.pulled == expected.last! + 1, "after \(released) released")
            bodies.release(released)
        }
        #expect(try await call.value == (0..<12).map { $0 * 10 })
        #expect(bodies.most == width)
        #expect(source.pulled == 12)
    }

    @Test("Width 4 on the cooperative pool: 1,000 bodies that yield, never more than 4 inside, results in order")
    func widthOnThePool() async throws {
        let inside = Locked((now: 0, most: 0))
        let results = try await (0..<1_000).concurrentMap(maxConcurrency: 4) { element in
            inside.withValue {
                $0.now += 1
                $0.most = max($0.most, $0.now)
            }
            for _ in 0..<(element % 5) { await Task.yield() }
            inside.withValue { $0.now -= 1 }
            return element * 2
        }
        #expect(results == (0..<1_000).map { $0 * 2 })
        #expect(inside.get().most <= 4 && inside.get().now == 0)
    }

    @Test("Results come back in the order of the elements, though the bodies finish newest first", arguments: [2, 4])
    func resultsInOrder(width: Int) async throws {
        let executor = SettlingExecutor()
        let bodies = HeldBodies()
        let call = Task(executorPreference: executor) {
            try await (0..<20).concurrentMap(maxConcurrency: width) { element in
                try await bodies.hold(element)
                return "e\(element)"
            }
        }
        let finished = releaseNewestFirst(bodies, on: executor)
        #expect(finished.count == 20 && finished != Array(0..<20))
        #expect(try await call.value == (0..<20).map { "e\($0)" })
    }

    @Test("concurrentCompactMap drops the nils and keeps the rest in order, whatever order they finish in")
    func compactMapDropsNilsInOrder() async throws {
        let executor = SettlingExecutor()
        let bodies = HeldBodies()
        let call = Task(executorPreference: executor) {
            try await (0..<20).concurrentCompactMap(maxConcurrency: 3) { element -> String? in
                try await bodies.hold(element)
                return element % 3 == 0 ? nil : "e\(element)"
            }
        }
        _ = releaseNewestFirst(bodies, on: executor)
        #expect(try await call.value == (0..<20).filter { $0 % 3 != 0 }.map { "e\($0)" })
        // Width 1 runs in the calling task: the same answer.
        let serial = try await (0..<20).concurrentCompactMap(maxConcurrency: 1) { $0 % 3 == 0 ? nil : "e\($0)" }
        #expect(serial == (0..<20).filter { $0 % 3 != 0 }.map { "e\($0)" })
    }

    @Test("The first error cancels the other bodies, waits for them to end, and is the one thrown", arguments: [2, 3])
    func firstErrorWins(width: Int) async throws {
        let executor = SettlingExecutor()
        let bodies = HeldBodies()
        let source = CountingSequence(count: 10)
        let log = Locked<[String]>([])
        let failing = width - 1
        let call = Task(executorPreference: executor) {
            do {
                _ = try await source.concurrentMap(maxConcurrency: width) { element in
                    defer { log.withValue { $0.append("ended \(element)") } }
                    // The others throw CancellationError when cancelled: later errors, dropped.
                    try await bodies.hold(element)
                    if element == failing { throw TestError.boom }
                    return element
                }
                log.withValue { $0.append("returned") }
            } catch {
                log.withValue { $0.append("threw \(error)") }
            }
        }
        executor.settle()
        #expect(bodies.held == Array(0..<width))
        bodies.release(failing)
        executor.settle()
        // Every other body saw the cancellation; none is still held, and no element started.
        #expect(bodies.cancelled == Set(0..<failing))
        #expect(bodies.held == [])
        #expect(source.pulled == width)
        _ = releaseNewestFirst(bodies, on: executor)  // lets a broken call end
        await call.value
        let entries = log.get()
        #expect(entries.last == "threw boom")
        #expect(Set(entries.dropLast()) == Set((0..<width).map { "ended \($0)" }))
    }

    @Test("Cancelling the calling task cancels every body; the call throws CancellationError after they end")
    func callerCancellationCancelsEveryBody() async throws {
        let executor = SettlingExecutor()
        let bodies = HeldBodies()
        let source = CountingSequence(count: 10)
        let log = Locked<[String]>([])
        let call = Task(executorPreference: executor) {
            do {
                try await source.concurrentForEach(maxConcurrency: 3) { element in
                    defer { log.withValue { $0.append("ended \(element)") } }
                    try await bodies.hold(element)
                }
                log.withValue { $0.append("returned") }
            } catch {
                log.withValue { $0.append("threw \(type(of: error))") }
            }
        }
        executor.settle()
        #expect(bodies.held == [0, 1, 2])
        call.cancel()
        executor.settle()
        #expect(bodies.cancelled == [0, 1, 2])
        #expect(source.pulled == 3)
        _ = releaseNewestFirst(bodies, on: executor)  // lets a broken call end
        await call.value
        let entries = log.get()
        #expect(entries.last == "threw CancellationError")
        #expect(Set(entries.dropLast()) == ["ended 0", "ended 1", "ended 2"])
    }

    @Test("A cancelled caller starts no further element, even when the bodies ignore cancellation and succeed")
    func cancelledCallerStartsNothingMore() async throws {
        let executor = SettlingExecutor()
        let bodies = HeldBodies()
        let source = CountingSequence(count: 10)
        let call = Task(executorPreference: executor) {
            try await source.concurrentMap(maxConcurrency: 2) { element in
                await bodies.holdIgnoringCancellation(element)
                return element
            }
        }
        executor.settle()
        #expect(bodies.held == [0, 1])
        call.cancel()
        bodies.release(0)
        bodies.release(1)
        executor.settle()
        #expect(source.pulled == 2)
        #expect(bodies.held == [])
        _ = releaseNewestFirst(bodies, on: executor)  // lets a broken call end
        await #expect(throws: CancellationError.self) { try await call.value }
        // A caller cancelled before the call pulls nothing, and width 1 behaves the same.
        for width in [1, 3] {
            let early = CountingSequence(count: 10)
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await early.concurrentMap(maxConcurrency: width) { $0 }
            }
            await #expect(throws: CancellationError.self) { try await task.value }
            #expect(early.pulled == 0)
        }
    }

    @Test("concurrentForEach over a long sequence holds at most maxConcurrency elements at once", arguments: [1, 3, 8])
    func forEachHoldsBoundedElements(width: Int) async throws {
        let source = CountingSequence(count: 5_000)
        try await source.concurrentForEach(maxConcurrency: width) { _ in
            await Task.yield()
            source.finish()
        }
        #expect(source.pulled == 5_000 && source.finished == 5_000)
        #expect(source.mostOutstanding <= width)
    }

    @Test("concurrentForEach over an endless sequence runs until a body throws, holding a bounded number of elements")
    func forEachOverAnEndlessSequence() async throws {
        let source = CountingSequence(count: nil)
        await #expect(throws: TestError.boom) {
            try await source.concurrentForEach(maxConcurrency: 4) { element in
                await Task.yield()
                source.finish()
                if element == 2_000 { throw TestError.boom }
            }
        }
        #expect(source.pulled >= 2_001)
        #expect(source.mostOutstanding <= 4)
    }

    @Test(
        "Width 1 runs every call in the calling task itself; a wider one in child tasks, for all three methods",
        arguments: [1, 3])
    func widthOneRunsInTheCallingTask(width: Int) async throws {
        /// The running task, as a number that tells tasks apart while they live.
        @Sendable func currentTask() -> Int { withUnsafeCurrentTask { $0!.hashValue } }
        let caller = currentTask()
        let mapped = try await [1, 2, 3, 4].concurrentMap(maxConcurrency: width) { _ in currentTask() }
        let compactMapped = try await [1, 2, 3, 4].concurrentCompactMap(maxConcurrency: width) { _ in currentTask() }
        let visited = Locked<[Int]>([])
        try await [1, 2, 3, 4].concurrentForEach(maxConcurrency: width) { _ in
            visited.withValue { $0.append(currentTask()) }
        }
        for (method, tasks) in [("map", mapped), ("compactMap", compactMapped), ("forEach", visited.get())] {
            #expect(tasks.count == 4, "\(method)")
            if width == 1 {
                #expect(tasks.allSatisfy { $0 == caller }, "\(method) runs in the calling task")
            } else {
                #expect(!tasks.contains(caller), "\(method) runs in child tasks")
            }
        }
    }

    @Test("An empty sequence, and fewer elements than the width, give what map gives", arguments: [1, 2, 16])
    func shortSequences(width: Int) async throws {
        #expect(try await [Int]().concurrentMap(maxConcurrency: width) { $0 } == [])
        #expect(try await [Int]().concurrentCompactMap(maxConcurrency: width) { $0 } == [])
        try await [Int]().concurrentForEach(maxConcurrency: width) { _ in Issue.record("a body ran") }
        #expect(try await [5, 6, 7].concurrentMap(maxConcurrency: width) { $0 + 1 } == [6, 7, 8])
        let seen = Locked<[Int]>([])
        try await [5, 6, 7].concurrentForEach(maxConcurrency: width) { element in
            seen.withValue { $0.append(element) }
        }
        #expect(seen.get().sorted() == [5, 6, 7])
        await #expect(throws: TestError.boom) {
            try await [5, 6, 7].concurrentMap(maxConcurrency: width) { element -> Int in
                if element == 6 { throw TestError.boom }
                return element
            }
        }
    }

    @Test("Called from an actor, the actor's own non-Sendable sequence is iterated on it")
    func fromAnActor() async throws {
        let library = Library()
        #expect(try await library.lengths() == [3, 5, 4])
    }

    @Test("maxConcurrency below 1 stops, with a message naming the method and the value")
    func widthBelowOneStops() async {
        let map = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = try await [1, 2].concurrentMap(maxConcurrency: 0) { $0 }
        }
        let forEach = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            try await [1, 2].concurrentForEach(maxConcurrency: -3) { _ in }
        }
        #if DEBUG
        // An optimised precondition stops without its message.
        #expect(standardError(of: map).contains("concurrentMap: maxConcurrency must be at least 1 (got 0)"))
        #expect(standardError(of: forEach).contains("concurrentForEach: maxConcurrency must be at least 1 (got -3)"))
        #endif
        _ = (map, forEach)
    }
}

/// Releases the newest held body, then the next newest, until none is left; returns the order
/// they were released in (the order they finished).
private func releaseNewestFirst(_ bodies: HeldBodies, on executor: SettlingExecutor) -> [Int] {
    var released: [Int] = []
    while true {
        executor.settle()
        guard let newest = bodies.held.last else { return released }
        bodies.release(newest)
        released.append(newest)
    }
}

/// An actor with a sequence that is not `Sendable`, mapped concurrently from inside the actor.
private actor Library {
    private var titles = NonSendableTitles(titles: ["abc", "abcde", "abcd"])

    func lengths() async throws -> [Int] {
        try await titles.concurrentMap(maxConcurrency: 2) { $0.count }
    }
}

private struct NonSendableTitles: Sequence {
    var titles: [String]
    let marker = NonSendableMarker()

    func makeIterator() -> IndexingIterator<[String]> { titles.makeIterator() }
}

private final class NonSendableMarker {}

/// Bodies that wait, each on a gate of its own, until the test releases them; a held body that
/// is cancelled throws `CancellationError` at once. Records who started, who is held, who was
/// cancelled, and the most inside at once.
final class HeldBodies: @unchecked Sendable {  // `lock` guards every field
    private let lock = NSLock()
    private var released: Set<Int> = []
    private var waiting: [Int: CheckedContinuation<Void, any Error>] = [:]
    private var cancelledElements: Set<Int> = []
    private var inside = 0
    private var mostInside = 0

    /// Waits until `release(element)`; throws `CancellationError` if the task is cancelled first.
    func hold(_ element: Int) async throws {
        enter()
        defer { leave() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                lock.lock()
                if released.contains(element) {
                    lock.unlock()
                    continuation.resume()
                } else if cancelledElements.contains(element) {
                    lock.unlock()
                    continuation.resume(throwing: CancellationError())
                } else {
                    waiting[element] = continuation
                    lock.unlock()
                }
            }
        } onCancel: {
            lock.lock()
            cancelledElements.insert(element)
            let continuation = waiting.removeValue(forKey: element)
            lock.unlock()
            continuation?.resume(throwing: CancellationError())
        }
    }

    /// Waits until `release(element)`, cancelled or not.
    func holdIgnoringCancellation(_ element: Int) async {
        enter()
        defer { leave() }
        try? await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            lock.lock()
            if released.contains(element) {
                lock.unlock()
                continuation.resume()
            } else {
                waiting[element] = continuation
                lock.unlock()
            }
        }
    }

    func release(_ element: Int) {
        lock.lock()
        released.insert(element)
        let continuation = waiting.removeValue(forKey: element)
        lock.unlock()
        continuation?.resume()
    }

    /// The elements whose bodies wait now, in order.
    var held: [Int] { lock.withLock { waiting.keys.sorted() } }
    /// The elements whose bodies were cancelled while they were held or before.
    var cancelled: Set<Int> { lock.withLock { cancelledElements } }
    /// The most bodies inside at once.
    var most: Int { lock.withLock { mostInside } }

    private func enter() {
        lock.withLock {
            inside += 1
            mostInside = max(mostInside, inside)
        }
    }

    private func leave() {
        lock.withLock { inside -= 1 }
    }
}

/// The integers from 0 (`count` of them, or without end), counting how many were pulled from
/// its iterators and, through `finish()`, how many the bodies finished: the most pulled and not
/// finished at the moment of a pull is how many elements the caller held at once.
final class CountingSequence: Sequence, @unchecked Sendable {  // `lock` guards the counts
    private let count: Int?
    private let lock = NSLock()
    private var pulledCount = 0
    private var finishedCount = 0
    private var most = 0

    init(count: Int?) {
        self.count = count
    }

    var pulled: Int { lock.withLock { pulledCount } }
    var finished: Int { lock.withLock { finishedCount } }
    var mostOutstanding: Int { lock.withLock { most } }

    /// Called by a body as it ends.
    func finish() {
        lock.withLock { finishedCount += 1 }
    }

    fileprivate func pull() -> Int? {
        lock.withLock {
            if let count, pulledCount == count { return nil }
            pulledCount += 1
            most = Swift.max(most, pulledCount - finishedCount)
            return pulledCount - 1
        }
    }

    struct Iterator: IteratorProtocol {
        fileprivate let source: CountingSequence

        mutating func next() -> Int? { source.pull() }
    }

    func makeIterator() -> Iterator { Iterator(source: self) }
}
