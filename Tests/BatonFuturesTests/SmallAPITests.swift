import BatonFutures
import BatonLocks
import Testing

/// The small parts of the API: each checked for the outcome it promises, success and failure.
@Suite("Small API")
struct SmallAPITests {
    @Test("discardingValue completes with the source, dropping only the value", .timeLimit(.minutes(1)))
    func discardingValue() async throws {
        let source = Promise<Int>()
        let done = source.future.discardingValue()
        #expect(!done.isCompleted)
        source.succeed(42)
        try await done.expectValue()
        #expect(done.isCompleted)

        let failing = Promise<Int>()
        let failed = failing.future.discardingValue()
        failing.fail(TestError(7))
        #expect(await failed.expectError() as? TestError == TestError(7))
    }

    @Test("whenFailure runs once with the error, and never on success; whenSuccess the reverse")
    func whenFailureAndWhenSuccess() {
        let errors = EventLog<Int>()
        let values = EventLog<Int>()
        let failing = Promise<Int>()
        failing.future.whenFailure { errors.append(($0 as? TestError)?.tag ?? -1) }
        failing.future.whenSuccess { values.append($0) }
        failing.fail(TestError(3))
        let succeeding = Promise<Int>()
        succeeding.future.whenFailure { _ in errors.append(-2) }
        succeeding.future.whenSuccess { values.append($0) }
        succeeding.succeed(5)
        // Registered after completion: runs at once, inline.
        failing.future.whenFailure { errors.append(($0 as? TestError)?.tag ?? -1) }
        let cancelled = Promise<Int>()
        cancelled.future.whenFailure { errors.append($0 is CancellationError ? 100 : -3) }
        cancelled.future.cancel()
        #expect(errors.all == [3, 3, 100])
        #expect(values.all == [5])
    }

    @Test("complete(with: Future) adopts the other future's outcome, value or error", .timeLimit(.minutes(1)))
    func completeWithFuture() async throws {
        let other = Promise<String>()
        let adopting = Promise<String>()
        adopting.complete(with: other.future)
        #expect(!adopting.future.isCompleted)
        other.succeed("adopted")
        #expect(try await adopting.future.expectValue() == "adopted")

        let failingOther = Promise<String>()
        let adoptingFailure = Promise<String>()
        adoptingFailure.complete(with: failingOther.future)
        failingOther.fail(TestError(9))
        #expect(await adoptingFailure.future.expectError() as? TestError == TestError(9))

        // Already completed: adopted at once.
        let done = Promise<String>()
        done.succeed("early")
        let late = Promise<String>()
        late.complete(with: done.future)
        #expect(try late.future.result?.get() == "early")
    }

    @Test("cancelling the adopting promise's future cancels the future it adopted")
    func completeWithFuturePropagatesCancellation() {
        let other = Promise<Int>()
        let cancelledUpstream = EventLog<Int>()
        other.onCancel { cancelledUpstream.append(1) }
        let adopting = Promise<Int>()
        adopting.complete(with: other.future)
        adopting.future.cancel()
        #expect(other.future.isCancelled)
        #expect(cancelledUpstream.all == [1])
        #expect(adopting.future.isCancelled)
    }

    @Test("cancel(answering:) runs the cancellation handlers, and observers see the answer, not a cancellation")
    func cancellingWithAnAnswer() throws {
        struct Reason: Error, Equatable {}
        let promise = Promise<Int>()
        let stopped = Protected(0)
        promise.onCancel { stopped.write { $0 += 1 } }
        let seen = Protected<Result<Int, any Error>?>(nil)
        promise.future.whenComplete { outcome in seen.write { $0 = outcome } }
        #expect(promise.cancel(answering: .failure(Reason())))
        #expect(stopped.value == 1)
        #expect(throws: Reason.self) { try seen.value?.get() }
        #expect(!promise.future.isCancelled)
        // Completed already: a second cancel, or a cancel(answering:), changes nothing and stops nothing again.
        #expect(!promise.cancel(answering: .success(1)))
        promise.future.cancel()
        #expect(stopped.value == 1)
        #expect(throws: Reason.self) { try promise.future.result?.get() }
    }
}
