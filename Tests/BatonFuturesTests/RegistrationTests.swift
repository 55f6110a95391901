import BatonFutures
import BatonTestSupport
import Dispatch
import Testing

/// Registering callbacks: the first is stored inline, the later ones in a list, and each is
/// moved (not copied) into the future and out again. Every callback runs exactly once, in
/// registration order, and what it captured is released once it has run.
@Suite struct RegistrationTests {
    /// One callback (stored inline), two (the inline one moved into a list), three and more
    /// (appended to the list).
    static let callbackCounts = [1, 2, 3, 10]

    @Test(arguments: callbackCounts) func callbacksOfAPendingFutureRunOnceEachInRegistrationOrder(_ count: Int) {
        let promise = Promise<Int>()
        let log = EventLog<String>()
        for index in 0..<count {
            promise.future.whenComplete { log.append("\(index): \(try! $0.get())") }
        }
        #expect(log.count == 0)
        promise.succeed(5)
        #expect(log.all == (0..<count).map { "\($0): 5" })
        // A later completion runs nothing again.
        #expect(!promise.tryComplete(with: .success(6)))
        #expect(log.count == count)
    }

    @Test(arguments: callbackCounts) func aCancelledFutureRunsItsCallbacksOnceWithTheCancellation(_ count: Int) {
        let promise = Promise<Int>()
        let log = EventLog<Int>()
        let handlers = EventLog<Int>()
        promise.onCancel { handlers.append(0) }
        for index in 0..<count {
            promise.future.whenFailure { error in if error is CancellationError { log.append(index) } }
        }
        promise.future.cancel()
        promise.future.cancel()
        #expect(log.all == Array(0..<count))
        #expect(handlers.count == 1)
    }

    @Test(arguments: callbackCounts) func whatCallbacksCaptureIsReleasedOnceTheyHaveRun(_ count: Int) {
        let census = Census()
        let promise = Promise<Int>()
        let runs = EventLog<Int>()
        for _ in 0..<count {
            let captured = Tracked(census)
            promise.future.whenComplete { _ in runs.append(captured.id) }
        }
        // Registered after completion: run at once, and released as soon as they have run.
        promise.succeed(1)
        for _ in 0..<count {
            let captured = Tracked(census)
            promise.future.whenComplete { _ in runs.append(captured.id) }
        }
        #expect(runs.count == 2 * count)
        #expect(census.made == 2 * count)
        #expect(census.released == 2 * count)
    }

    @Test func whatAPendingFuturesCallbacksCaptureIsReleasedWithTheFuture() {
        let census = Census()
        do {
            let promise = Promise<Int>()
            for _ in 0..<3 {
                let captured = Tracked(census)
                promise.future.whenComplete { _ in _ = captured }
            }
            #expect(census.released == 0)
        }
        #expect(census.made == 3)
        #expect(census.released == 3)
    }

    /// Registrations racing the completion from real threads: a callback registered just as the
    /// future completes is either stored and run by the completer, or handed back and run by its
    /// registrant, never both and never neither.
    @Test(.timeLimit(.minutes(1)), arguments: 1...20)
    func registrationsRacingCompletionRunEachCallbackOnce(_ round: Int) async {
        let registrants = 3
        let callbacksEach = 50
        let census = Census()
        let promise = Promise<Int>()
        let runs = EventLog<Int>()
        let register: @Sendable () -> Void = {
            for _ in 0..<callbacksEach {
                let captured = Tracked(census)
                promise.future.whenComplete { outcome in
                    _ = captured
                    runs.append(try! outcome.get())
                }
            }
        }
        await raceThreads(Array(repeating: register, count: registrants) + [{ promise.succeed(round) }])
        #expect(runs.count == registrants * callbacksEach)
        #expect(runs.all.allSatisfy { $0 == round })
        #expect(census.released == registrants * callbacksEach)
    }

    /// The inline executor on a thread that has never run a callback: its per-thread state is
    /// made on first use.
    @Test(.timeLimit(.minutes(1))) func anInlineCallbackRunsOnAFreshThread() async {
        let promise = Promise<Int>()
        let runs = EventLog<Int>()
        promise.future.whenComplete { runs.append(try! $0.get()) }
        await raceThreads([{ promise.succeed(3) }])
        await raceThreads([{ promise.future.whenComplete { runs.append(try! $0.get() + 1) } }])
        #expect(runs.all == [3, 4])
    }
}
