import BatonFutures
import BatonLocks
import Foundation
import Testing

@Suite struct FutureTests {
    @Test func callbacksRegisteredBeforeAndAfterCompletionEachRunOnce() async throws {
        let promise = Promise<Int>()
        let log = EventLog<String>()
        promise.future.whenComplete { log.append("before \(try! $0.get())") }
        promise.succeed(7)
        promise.future.whenComplete { log.append("after \(try! $0.get())") }
        #expect(log.all == ["before 7", "after 7"])
        #expect(try await promise.future.expectValue() == 7)
        #expect(log.count == 2)
    }

    @Test func throwingBodyFailsTheFuture() async {
        let future = Future<Int> { _ in throw TestError(3) }
        #expect(await future.expectError() as? TestError == TestError(3))
    }

    @Test func succeededAndFailedAreComplete() throws {
        #expect(try Future.succeeded(1).result?.get() == 1)
        #expect(Future<Int>.failed(TestError()).isCompleted)
        #expect(!Promise<Int>().future.isCompleted)
    }

    @Test func callbacksRunOnTheRequestedQueue() async throws {
        let key = DispatchSpecificKey<String>()
        let queue = DispatchQueue(label: "callbacks")
        queue.setSpecific(key: key, value: "callbacks")
        let promise = Promise<Int>()
        let seen = Promise<String?>()
        promise.future.whenComplete(on: .queue(queue)) { _ in seen.succeed(DispatchQueue.getSpecific(key: key)) }
        promise.succeed(1)
        #expect(try await seen.future.expectValue() == "callbacks")

        // Registered after completion: still delivered on the queue.
        let late = Promise<String?>()
        promise.future.whenComplete(on: .queue(queue)) { _ in late.succeed(DispatchQueue.getSpecific(key: key)) }
        #expect(try await late.future.expectValue() == "callbacks")
    }

    @Test func aSerialQueueDeliversInRegistrationOrder() async throws {
        let queue = DispatchQueue(label: "ordered")
        let promise = Promise<Int>()
        let log = EventLog<Int>()
        let done = Promise<Void>()
        for index in 0..<200 {
            promise.future.whenComplete(on: .queue(queue)) { _ in
                log.append(index)
                if index == 199 { done.succeed() }
            }
        }
        promise.succeed(0)
        try await done.future.expectValue()
        #expect(log.all == Array(0..<200))
    }

    @Test func customExecutorRunsCallbacks() async throws {
        let hops = EventLog<Int>()
        let executor = Executor { work in
            hops.append(1)
            DispatchQueue.global().async(execute: work)
        }
        let value = try await Future.succeeded(20).map(on: executor) { $0 + 1 }.expectValue()
        #expect(value == 21)
        #expect(hops.count == 1)
    }

    @Test func callbackMayCallBackIntoTheSameFuture() async throws {
        // Callbacks run outside the future's lock: re-entering must not deadlock.
        let promise = Promise<Int>()
        let inner = Promise<Int>()
        promise.future.whenComplete { _ in
            let current = try! promise.future.result!.get()
            promise.future.whenComplete { _ in inner.succeed(current + (promise.future.isCompleted ? 1 : 0)) }
        }
        promise.succeed(1)
        #expect(try await inner.future.expectValue() == 2)
    }

    @Test func secondCompletionIsIgnoredAndReportedInDebugBuilds() throws {
        struct DuplicateProbe: Sendable {}
        DuplicateReports.install()

        let promise = Promise<DuplicateProbe>()
        promise.succeed(DuplicateProbe())
        let failLine = UInt(#line + 1)
        promise.fail(TestError())
        #expect(try promise.future.result?.get() != nil)
        #expect(promise.tryComplete(with: .failure(TestError())) == false)
        let reports = DuplicateReports.about("DuplicateProbe")
        #if DEBUG
        #expect(reports.count == 1)
        #expect(reports.first?.line == failLine)
        #expect(reports.first?.file.hasSuffix("FutureTests.swift") == true)
        #else
        _ = failLine
        #expect(reports.isEmpty)
        #endif
    }

    @Test(arguments: 1...20) func exactlyOnceUnderEightRacingCompleters(_ round: Int) async throws {
        let promise = Promise<Int>()
        let callbackRuns = EventLog<Int>()
        let winners = EventLog<Int>()
        promise.future.whenSuccess { callbackRuns.append($0) }
        await raceThreads(
            (0..<8).map { thread in
                {
                    // Half the threads register a callback while the others complete.
                    if thread % 2 == 0 { promise.future.whenSuccess { callbackRuns.append($0) } }
                    if promise.tryComplete(with: .success(thread)) { winners.append(thread) }
                }
            })
        #expect(winners.count == 1)
        let winner = winners.all.first
        #expect(try promise.future.result?.get() == winner)
        // The first callback plus one per even thread, each exactly once, all with the winner.
        #expect(callbackRuns.count == 1 + 4)
        #expect(callbackRuns.all.allSatisfy { $0 == winner })
    }

    @Test(arguments: 1...10) func readersWithoutALockSeeWhatTheCompleterWrote(_ round: Int) async {
        // `isCompleted`, `result` and `whenComplete` on a completed future take no lock: they
        // rely on the completion flag's release and acquire. The completer fills a payload with
        // plain writes and then completes; readers that spin until the future is complete must
        // see the payload whole, and each callback must run once. Under the thread sanitizer a
        // missing ordering is reported as a race on the payload's plain fields.
        let promise = Promise<Payload>()
        let expected = (0..<64).map { $0 * round }
        let seen = EventLog<[Int]>()
        let callbackRuns = EventLog<Int>()
        let readers: [@Sendable () -> Void] = (0..<4).map { reader in
            {
                while !promise.future.isCompleted { sched_yield() }
                // Each read comes before this thread takes any lock (the logs take one), so only
                // the future itself can order it after the completer's writes.
                let direct = try? promise.future.result?.get().words
                promise.future.whenSuccess { payload in
                    let words = payload.words
                    callbackRuns.append(reader)
                    seen.append(words)
                }
                seen.append(direct ?? [])
            }
        }
        let completer: @Sendable () -> Void = {
            let payload = Payload()
            payload.words = expected
            promise.succeed(payload)
        }
        await raceThreads(readers + [completer])
        #expect(seen.count == 8)
        #expect(seen.all.allSatisfy { $0 == expected })
        #expect(Set(callbackRuns.all) == [0, 1, 2, 3])
        #expect(callbackRuns.count == 4)
    }

    @Test(arguments: 1...10) func allOverInputsCompletedOnOtherThreadsSeesWhatTheirCompletersWrote(_ round: Int) async {
        // `Future.all` over completed inputs checks their flags first and reads their outcomes
        // after, without a lock. Two completers fill payloads with plain writes and complete the
        // inputs in turn; readers wait until every input is complete, join them, and read the
        // payloads before taking any lock. Under the thread sanitizer a read that no acquire
        // orders after the completer's release is reported as a race on the payload's fields.
        let promises = (0..<32).map { _ in Promise<Payload>() }
        let futures = promises.map(\.future)
        let expected = (0..<32).map { input in (0..<16).map { $0 * input + round } }
        let seen = EventLog<[[Int]]>()
        let readers: [@Sendable () -> Void] = (0..<3).map { _ in
            {
                while !futures.allSatisfy({ $0.isCompleted }) { sched_yield() }
                let joined = Future.all(futures)
                let words = (try? joined.result?.get())?.map(\.words)
                seen.append(words ?? [])
            }
        }
        let completers: [@Sendable () -> Void] = (0..<2).map { half in
            {
                for input in stride(from: half, to: 32, by: 2) {
                    let payload = Payload()
                    payload.words = expected[input]
                    promises[input].succeed(payload)
                }
            }
        }
        await raceThreads(readers + completers)
        #expect(seen.count == 3)
        #expect(seen.all.allSatisfy { $0 == expected })
    }

    @Test(arguments: 1...10) func cancelRacingCompletionDecidesOnce(_ round: Int) async {
        let promise = Promise<Int>()
        let handlerRuns = EventLog<Int>()
        let outcomes = EventLog<Bool>()
        promise.onCancel { handlerRuns.append(0) }
        promise.future.whenComplete { outcomes.append((try? $0.get()) != nil) }
        await raceThreads(
            (0..<8).map { thread in
                { if thread % 2 == 0 { promise.future.cancel() } else { promise.tryComplete(with: .success(thread)) } }
            })
        #expect(outcomes.count == 1)
        // The cancellation handler runs if and only if the cancellation won.
        #expect(handlerRuns.count == (promise.future.isCancelled ? 1 : 0))
    }

    @Test func cancelRunsHandlersOnceAndOnlyWhilePending() {
        let promise = Promise<Int>()
        let log = EventLog<String>()
        promise.onCancel { log.append("first") }
        promise.future.cancel()
        promise.future.cancel()
        promise.onCancel { log.append("late") }  // already cancelled: runs at once
        #expect(log.all == ["first", "late"])
        #expect(promise.isCancelled)
        #expect(throws: CancellationError.self) { try promise.future.result?.get() }

        let done = Promise<Int>()
        done.onCancel { log.append("never") }
        done.succeed(1)
        done.future.cancel()
        #expect(!done.isCancelled)
        #expect(log.count == 2)
    }

    @Test func aCancelledPromiseIgnoresItsLateResultWithoutAReport() throws {
        struct LateProbe: Sendable { let value: Int }
        DuplicateReports.install()
        let promise = Promise<LateProbe>()
        promise.future.cancel()
        promise.succeed(LateProbe(value: 1))  // the work finished anyway: no report, no change
        promise.fail(TestError())
        #expect(promise.future.isCancelled)
        #expect(throws: CancellationError.self) { try promise.future.result?.get() }
        #expect(DuplicateReports.about("LateProbe").isEmpty)
        // The handler is listening: a real second completion of the same type is reported.
        let twice = Promise<LateProbe>()
        twice.succeed(LateProbe(value: 2))
        twice.succeed(LateProbe(value: 3))
        #expect(try twice.future.result?.get().value == 2)
        #if DEBUG
        #expect(DuplicateReports.about("LateProbe").count == 1)
        #endif
    }

    @Test func deepChainOfMapsDoesNotOverflowTheStack() async throws {
        let root = Promise<Int>()
        var future = root.future
        for _ in 0..<100_000 { future = future.map { $0 + 1 } }
        root.succeed(0)
        #expect(try await future.expectValue() == 100_000)
    }

    /// `Executor.queue(_:).execute` submits the work with `async`: it returns before the work
    /// runs, and the work runs on that queue. The queue is kept busy until `execute` has
    /// returned, so the work cannot have run in between unless it ran in the call.
    @Test func executeOnAQueueRunsTheWorkLaterOnThatQueue() async throws {
        let queue = DispatchQueue(label: "executor-async")
        let key = DispatchSpecificKey<String>()
        queue.setSpecific(key: key, value: "executor-async")
        let gate = DispatchSemaphore(value: 0)
        queue.async { _ = gate.wait(timeout: .now() + .seconds(60)) }
        let ranOn = Protected<[String?]>([])
        let done = Promise<Void>()
        Executor.queue(queue).execute {
            ranOn.write { $0.append(DispatchQueue.getSpecific(key: key)) }
            done.succeed()
        }
        #expect(ranOn.value.isEmpty, "the work ran inside execute")
        gate.signal()
        try await done.future.expectValue()
        #expect(ranOn.value == ["executor-async"])
    }
}

/// Plain memory written by one thread before it completes a future: whoever sees the future
/// complete must see these writes (the future's completion orders them).
final class Payload: @unchecked Sendable {
    var words: [Int] = []
}
