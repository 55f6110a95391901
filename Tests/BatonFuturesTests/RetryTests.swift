import BatonFutures
import Foundation
import Testing

@Suite struct RetryTests {
    @Test func retrySucceedsOnALaterAttempt() async throws {
        let attempts = EventLog<Int>()
        let value = try await Future<String>.retry(attempts: 5) {
            attempts.append(0)
            return attempts.count < 3 ? .failed(TestError(attempts.count)) : .succeeded("third")
        }.expectValue()
        #expect(value == "third")
        #expect(attempts.count == 3)
    }

    @Test func retryStopsAfterTheLimit() async {
        let attempts = EventLog<Int>()
        let retried = Future<Int>.retry(attempts: 4, backoff: .constant(.milliseconds(1))) {
            attempts.append(0)
            return Future { promise in DispatchQueue.global().async { promise.fail(TestError(attempts.count)) } }
        }
        #expect(await retried.expectError() as? TestError == TestError(4))
        #expect(attempts.count == 4)
    }

    @Test func retryStopsOnAnErrorThatIsNotTransient() async {
        let attempts = EventLog<Int>()
        let retried = Future<Int>.retry(attempts: 10, while: { ($0 as? TestError)?.tag != 2 }) {
            attempts.append(0)
            return .failed(TestError(attempts.count))
        }
        #expect(await retried.expectError() as? TestError == TestError(2))
        #expect(attempts.count == 2)
    }

    @Test func cancellingARetryStopsTheAttemptInProgress() async {
        let attempt = Promise<Int>()
        let retried = Future<Int>.retry(attempts: 3) { attempt.future }
        retried.cancel()
        #expect(attempt.isCancelled)
        #expect(await retried.expectError() is CancellationError)
    }

    @Test func cancellingARetryDuringItsBackoffStopsFurtherAttempts() async {
        let attempts = EventLog<Int>()
        let firstFailed = Promise<Void>()
        let retried = Future<Int>.retry(attempts: 3, backoff: .constant(.seconds(60))) {
            attempts.append(0)
            return Future { promise in
                DispatchQueue.global().async {
                    promise.fail(TestError())
                    firstFailed.succeed()
                }
            }
        }
        _ = try? await firstFailed.future.expectValue()
        retried.cancel()
        #expect(await retried.expectError() is CancellationError)
        #expect(attempts.count == 1)
    }

    @Test func backoffDelays() {
        #expect(Backoff.constant(.milliseconds(5)).delay(beforeRetry: 3) == .milliseconds(5))
        let exponential = Backoff.exponential(initial: .milliseconds(100), multiplier: 2, maximum: .seconds(1))
        #expect(
            (1...6).map { exponential.delay(beforeRetry: $0) } == [
                .milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .seconds(1),
                .seconds(1),
            ])
        let jittered = Backoff.jittered(initial: .milliseconds(100), maximum: .seconds(1))
        for retry in 1...8 {
            let delay = jittered.delay(beforeRetry: retry)
            #expect(delay >= .zero && delay <= exponential.delay(beforeRetry: retry))
        }
        #expect(Backoff.none.delay(beforeRetry: 1) == .zero)
    }
}
