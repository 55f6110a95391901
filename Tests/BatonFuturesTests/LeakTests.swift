import BatonFutures
import BatonLocks
import BatonTestSupport
import Dispatch
import Foundation
import Testing

/// Every future, promise, value, error and closure that a combinator took in is released once
/// the work ends: 100,000 of each kind, checked with weak references to the futures and a
/// deinit counter on the values, with exact counts.
///
/// Release can come a moment after completion (a callback on a queue, a timer firing), so each
/// test polls for it with a bounded wait on a thread of its own, then checks the exact counts.
@Suite(.offTheCooperativePool) struct LeakTests {
    /// 100,000 of each kind; a tenth under a sanitizer.
    static let count = reducedUnderSanitizer(100_000, by: 10)

    // MARK: Chains

    @Test(.timeLimit(.minutes(1))) func longMapAndFlatMapChainsAreReleased() async {
        let census = Census()
        let futures = WeakRefs()
        let endValue = Protected<Int?>(nil)
        do {
            let head = Promise<Tracked>()
            futures.add(head.future)
            var end = head.future
            for step in 1...Self.count {
                switch step % 5 {
                case 0: end = end.map { Tracked(census, id: $0.id + 1) }
                case 1: end = end.flatMap { .succeeded(Tracked(census, id: $0.id + 1)) }
                case 2:
                    // Every 1,000th link completes later, on another thread.
                    end = end.flatMap { value in
                        Future { promise in
                            if step % 1_000 == 2 {
                                DispatchQueue.global().async { promise.succeed(Tracked(census, id: value.id + 1)) }
                            } else {
                                promise.succeed(Tracked(census, id: value.id + 1))
                            }
                        }
                    }
                case 3: end = end.recover { _ in Tracked(census, id: -1) }.map { Tracked(census, id: $0.id + 1) }
                default:
                    end = end.flatMapError { _ in .succeeded(Tracked(census, id: -1)) }
                        .map(on: step % 1_000 == 4 ? .global : .inline) { Tracked(census, id: $0.id + 1) }
                }
                futures.add(end)
            }
            end.whenSuccess { value in endValue.write { $0 = value.id } }
            head.succeed(Tracked(census, id: 0))
        }
        #expect(await eventuallyHolds { endValue.value != nil })
        // One value per link (two where recover or flatMapError passed one on), and the head's.
        #expect(endValue.value == Self.count)
        #expect(census.made == Self.count + 1)
        await expectAllReleased(futures, census)
    }

    /// A failure travels down a chain of 100,000 maps and is released with it; so are chains
    /// of 100 maps, 100,000 maps in all, cancelled from their ends (a cancellation goes up a
    /// chain one call deeper per link, so those chains are shorter).
    @Test(.timeLimit(.minutes(1))) func failedAndCancelledChainsAreReleased() async {
        let census = Census()
        let futures = WeakRefs()
        let outcomes = Outcomes()
        let chains = Self.count / 100
        do {
            let failing = Promise<Tracked>()
            var end = failing.future
            futures.add(end)
            for _ in 0..<Self.count {
                end = end.map { Tracked(census, id: $0.id + 1) }
                futures.add(end)
            }
            end.whenComplete { outcomes.record($0) }
            failing.fail(TrackedError(Tracked(census)))
            for _ in 0..<chains {
                let head = Promise<Tracked>()
                let tracked = Tracked(census)
                head.onCancel { withExtendedLifetime(tracked) {} }
                var end = head.future
                futures.add(end)
                for _ in 0..<Self.count / chains {
                    end = end.map { Tracked(census, id: $0.id + 1) }
                    futures.add(end)
                }
                end.whenComplete { outcomes.record($0) }
                end.cancel()
                #expect(head.isCancelled)
            }
        }
        #expect(await eventuallyHolds { outcomes.total == 1 + chains })
        #expect(outcomes.failed == 1 + chains)
        #expect(census.made == 1 + chains)
        await expectAllReleased(futures, census)
    }

    // MARK: zip, all, allSettled, race, any

    @Test(.timeLimit(.minutes(1))) func zippedFuturesAreReleased() async {
        let census = Census()
        let futures = WeakRefs()
        let outcomes = Outcomes()
        do {
            var lefts: [Promise<Tracked>] = []
            var rights: [Promise<Tracked>] = []
            for index in 0..<Self.count {
                let left = Promise<Tracked>()
                let right = Promise<Tracked>()
                let zipped: Future<(Tracked, Tracked)> =
                    index % 2 == 0
                    ? zip(left.future, right.future)
                    : zip(left.future, right.future, Future.succeeded(index)).map { ($0.0, $0.1) }
                // A callback that holds its own future: the cycle ends when the future completes.
                zipped.whenComplete { outcome in withExtendedLifetime(zipped) { outcomes.record(outcome) } }
                futures.add(left.future)
                futures.add(right.future)
                futures.add(zipped)
                lefts.append(left)
                rights.append(right)
            }
            let (leftSides, rightSides) = (lefts, rights)
            // Both sides complete at once from two threads; every third right side fails, and
            // its left side is then cancelled, or completes first.
            DispatchQueue.concurrentPerform(iterations: 2) { side in
                for index in 0..<Self.count {
                    if side == 0 {
                        leftSides[index].tryComplete(with: .success(Tracked(census, id: index)))
                    } else if index % 3 == 0 {
                        rightSides[index].fail(TrackedError(Tracked(census, id: index)))
                    } else {
                        rightSides[index].succeed(Tracked(census, id: index))
                    }
                }
            }
        }
        #expect(await eventuallyHolds { outcomes.total == Self.count })
        #expect(outcomes.failed == (Self.count + 2) / 3)
        #expect(census.made == 2 * Self.count)
        await expectAllReleased(futures, census)
    }

    @Test(.timeLimit(.minutes(1))) func allAndAllSettledAreReleased() async {
        let census = Census()
        let futures = WeakRefs()
        let all = Outcomes()
        let settled = Outcomes()
        let groups = Self.count / 100
        let size = Self.count / groups
        do {
            var inputs: [Promise<Tracked>] = []
            for _ in 0..<groups {
                let group = (0..<size).map { _ in Promise<Tracked>() }
                let collected = Future.all(group.map(\.future))
                let settledGroup = Future.allSettled(group.map(\.future))
                collected.whenComplete { all.record($0) }
                settledGroup.whenComplete { settled.record($0) }
                futures.add(collected)
                futures.add(settledGroup)
                for input in group { futures.add(input.future) }
                inputs += group
            }
            let allInputs = inputs
            // Even and odd inputs complete from two threads; one input of every tenth group
            // fails, and `all` cancels the rest of that group.
            DispatchQueue.concurrentPerform(iterations: 2) { parity in
                for index in stride(from: parity, to: allInputs.count, by: 2) {
                    if (index / size) % 10 == 0 && index % size == size / 2 {
                        allInputs[index].fail(TrackedError(Tracked(census, id: index)))
                    } else {
                        allInputs[index].tryComplete(with: .success(Tracked(census, id: index)))
                    }
                }
            }
        }
        #expect(await eventuallyHolds { all.total == groups && settled.total == groups })
        #expect(all.failed == groups / 10)
        #expect(settled.failed == 0)
        #expect(census.made == Self.count)
        await expectAllReleased(futures, census)
    }

    @Test(.timeLimit(.minutes(1))) func racesAndTheirLosersAreReleased() async {
        let census = Census()
        let futures = WeakRefs()
        let outcomes = Outcomes()
        do {
            var contenders: [(Promise<Tracked>, Promise<Tracked>)] = []
            for index in 0..<Self.count {
                let pair = (Promise<Tracked>(), Promise<Tracked>())
                let inputs = [pair.0.future, pair.1.future]
                let winner = index % 2 == 0 ? Future.race(inputs) : Future.any(inputs)
                winner.whenComplete { outcomes.record($0) }
                futures.add(winner)
                for input in inputs { futures.add(input) }
                contenders.append(pair)
            }
            let allContenders = contenders
            // The two inputs of each race complete at once from two threads: one wins, the other
            // finds itself cancelled (or completes first and loses the claim).
            DispatchQueue.concurrentPerform(iterations: 2) { side in
                for (index, pair) in allContenders.enumerated() {
                    (side == 0 ? pair.0 : pair.1).tryComplete(with: .success(Tracked(census, id: index)))
                }
            }
        }
        #expect(await eventuallyHolds { outcomes.total == Self.count })
        #expect(outcomes.failed == 0)
        #expect(census.made == 2 * Self.count)
        await expectAllReleased(futures, census)
    }

    // MARK: timeout

    /// A timeout that does not fire lets go of its source and its result as soon as the source
    /// completes, though its timer is still scheduled for an hour later.
    @Test(.timeLimit(.minutes(1))) func timeoutsThatDoNotFireAreReleased() async {
        let census = Census()
        let futures = WeakRefs()
        let outcomes = Outcomes()
        do {
            for index in 0..<Self.count {
                let source = Promise<Tracked>()
                let limited = source.future.timeout(after: .seconds(3_600))
                limited.whenComplete { outcomes.record($0) }
                futures.add(source.future)
                futures.add(limited)
                source.succeed(Tracked(census, id: index))
            }
        }
        #expect(outcomes.total == Self.count)
        #expect(outcomes.failed == 0)
        #expect(census.made == Self.count)
        await expectAllReleased(futures, census)
    }

    /// A timeout that fires cancels its source, whose cancellation handler runs and is released,
    /// and fails the result; nothing is held after that.
    @Test(.timeLimit(.minutes(1))) func timeoutsThatFireAreReleased() async {
        let census = Census()
        let futures = WeakRefs()
        let outcomes = Outcomes()
        let handlersRun = Protected(0)
        do {
            for index in 0..<Self.count {
                let source = Promise<Tracked>()
                let tracked = Tracked(census, id: index)
                source.onCancel { withExtendedLifetime(tracked) { handlersRun.write { $0 += 1 } } }
                let limited = source.future.timeout(after: .milliseconds(1))
                limited.whenComplete { outcomes.record($0) }
                futures.add(source.future)
                futures.add(limited)
            }
        }
        #expect(await eventuallyHolds { outcomes.total == Self.count })
        #expect(outcomes.failed == Self.count)
        #expect(handlersRun.value == Self.count)
        #expect(census.made == Self.count)
        await expectAllReleased(futures, census)
    }

    // MARK: retry

    /// Retries that fail twice and then succeed, retries that never succeed, retries waiting on
    /// a backoff timer, and retries cancelled while an attempt runs or while they wait for the
    /// next: every attempt and every driver is released.
    @Test(.timeLimit(.minutes(1))) func retriesAndTheirAttemptsAreReleased() async {
        let census = Census()
        let futures = WeakRefs()
        let outcomes = Outcomes()
        let cancelledWhileWaiting = Self.count / 100
        let cancelledWhileAttempting = Self.count / 100
        let attemptsMade = Protected(0)
        do {
            var toCancel: [Future<Tracked>] = []
            for index in 0..<Self.count {
                let attempt = Protected(0)
                let kind = index % 100
                let backoff: Backoff =
                    switch kind {
                    case 0: .constant(.seconds(3_600))  // cancelled while waiting
                    case 1: .none  // cancelled while attempting
                    case 2: .constant(.milliseconds(1))
                    default: .none
                    }
                let retried = Future<Tracked>.retry(attempts: 3, backoff: backoff) {
                    let number = attempt.write { count in
                        count += 1
                        return count
                    }
                    attemptsMade.write { $0 += 1 }
                    let made: Future<Tracked>
                    if kind == 1 {
                        made = Promise<Tracked>().future  // pending until cancelled
                    } else if number < 3 || kind == 3 {
                        made = .failed(TrackedError(Tracked(census, id: index)))
                    } else {
                        made = .succeeded(Tracked(census, id: index))
                    }
                    futures.add(made)
                    return made
                }
                retried.whenComplete { outcomes.record($0) }
                futures.add(retried)
                if kind <= 1 { toCancel.append(retried) }
            }
            for retried in toCancel { retried.cancel() }
        }
        #expect(await eventuallyHolds { outcomes.total == Self.count })
        let neverSucceed = Self.count / 100
        #expect(outcomes.failed == cancelledWhileWaiting + cancelledWhileAttempting + neverSucceed)
        // Three attempts each, but one for those cancelled while waiting for the second, or
        // while the first ran.
        let completedAll = Self.count - cancelledWhileWaiting - cancelledWhileAttempting
        #expect(attemptsMade.value == 3 * completedAll + cancelledWhileWaiting + cancelledWhileAttempting)
        #expect(census.made == 3 * completedAll + cancelledWhileWaiting)
        await expectAllReleased(futures, census)
    }

    // MARK: Cancelled, failed, and callbacks that hold their own future

    @Test(.timeLimit(.minutes(1))) func cancelledAndFailedFuturesAreReleased() async {
        let census = Census()
        let futures = WeakRefs()
        let outcomes = Outcomes()
        do {
            for index in 0..<Self.count {
                let promise = Promise<Tracked>()
                let future = promise.future
                // A callback and a cancellation handler that each hold the future and a value:
                // completing the future must drop both, or the future keeps itself alive.
                let heldByCallback = Tracked(census, id: index)
                let heldByHandler = Tracked(census, id: index)
                future.whenComplete(on: index % 1_000 == 0 ? .global : .inline) { outcome in
                    withExtendedLifetime((future, heldByCallback)) { outcomes.record(outcome) }
                }
                promise.onCancel { withExtendedLifetime((future, heldByHandler)) {} }
                futures.add(future)
                switch index % 3 {
                case 0: future.cancel()
                case 1: promise.fail(TrackedError(Tracked(census, id: index)))
                default: promise.succeed(Tracked(census, id: index))
                }
            }
        }
        #expect(await eventuallyHolds { outcomes.total == Self.count })
        #expect(outcomes.failed == Self.count - Self.count / 3)
        #expect(census.made == 2 * Self.count + Self.count - (Self.count + 2) / 3)
        await expectAllReleased(futures, census)
    }

    /// Every callback a future holds runs once and is then let go of: one callback or several,
    /// registered before completion, on the inline, a queue's and a custom executor, with the
    /// future succeeding, failing or cancelled. Each callback holds a value of its own, so one
    /// kept after it ran (or released once too often) shows in the exact counts.
    @Test(.timeLimit(.minutes(1))) func callbacksAreReleasedOnceTheyHaveRun() async {
        let census = Census()
        let futures = WeakRefs()
        let outcomes = Outcomes()
        let custom = Executor { work in DispatchQueue.global().async(execute: work) }
        var callbacks = 0
        var failedCallbacks = 0
        do {
            for index in 0..<Self.count {
                let promise = Promise<Int>()
                let future = promise.future
                futures.add(future)
                // One callback for most futures (stored inline), up to four for the others.
                let count = index % 4 == 0 ? 1 + index % 3 + 1 : 1
                for callback in 0..<count {
                    let held = Tracked(census, id: index)
                    let executor: Executor =
                        switch (index + callback) % 500 {
                        case 0: .global
                        case 1: custom
                        default: .inline
                        }
                    future.whenComplete(on: executor) { outcome in
                        withExtendedLifetime(held) { outcomes.record(outcome) }
                    }
                }
                callbacks += count
                if index % 3 != 2 { failedCallbacks += count }
                switch index % 3 {
                case 0: future.cancel()
                case 1: promise.fail(CancellationError())
                default: promise.succeed(index)
                }
            }
        }
        let expected = callbacks
        #expect(await eventuallyHolds { outcomes.total >= expected })
        #expect(outcomes.total == expected)
        #expect(outcomes.failed == failedCallbacks)
        #expect(census.made == expected)
        await expectAllReleased(futures, census)
    }

    /// Futures made from async bodies, half cancelled while the body is suspended: the task,
    /// its body and the future are released.
    @Test(.timeLimit(.minutes(1))) func futuresFromAsyncBodiesAreReleased() async {
        let census = Census()
        let futures = WeakRefs()
        let outcomes = Outcomes()
        let count = Self.count / 10  // a Task each: a tenth of the other kinds keeps this test as short
        do {
            for index in 0..<count {
                let tracked = Tracked(census, id: index)
                let future = Future<Tracked> {
                    if index % 2 == 0 { try await Task.sleep(for: .seconds(3_600)) }
                    return tracked
                }
                future.whenComplete { outcomes.record($0) }
                futures.add(future)
                if index % 2 == 0 { future.cancel() }
            }
        }
        #expect(await eventuallyHolds { outcomes.total == count })
        #expect(outcomes.failed == count / 2)
        #expect(census.made == count)
        await expectAllReleased(futures, census)
    }
}

// MARK: Support

/// Counts the outcomes futures completed with.
private final class Outcomes: Sendable {
    private let counts = Protected((total: 0, failed: 0))

    func record<Value>(_ outcome: Result<Value, any Error>) {
        counts.write { counts in
            counts.total += 1
            if case .failure = outcome { counts.failed += 1 }
        }
    }

    var total: Int { counts.read { $0.total } }
    var failed: Int { counts.read { $0.failed } }
}
