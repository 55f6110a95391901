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

    @Test func theWaitBeforeEachRetryIsComputedFromTheFailure() async throws {
        let asked = EventLog<(retry: Int, tag: Int)>()
        let attempts = EventLog<Int>()
        let retried = Future<Int>.retry(
            attempts: 4,
            delay: { retry, error in
                asked.append((retry, (error as? TestError)?.tag ?? -1))
                return .zero
            }
        ) {
            attempts.append(0)
            return attempts.count < 3 ? .failed(TestError(attempts.count * 10)) : .succeeded(3)
        }
        #expect(try await retried.expectValue() == 3)
        #expect(asked.all.map(\.retry) == [1, 2])
        #expect(asked.all.map(\.tag) == [10, 20])
        // Not asked for an error that is not retried.
        let stopped = Future<Int>.retry(attempts: 4, while: { _ in false }, delay: { _, _ in .seconds(3_600) }) {
            .failed(TestError(5))
        }
        #expect(await stopped.expectError() as? TestError == TestError(5))
    }

    @Test func everyWaitRunsOnTheTimerGiven() async throws {
        let waits = EventLog<Duration>()
        let timer = RetryTimer { delay, body in
            waits.append(delay)
            DispatchQueue.global().async(execute: body)
        }
        let attempts = EventLog<Int>()
        let retried = Future<Int>.retry(
            attempts: 3, while: { _ in true }, delay: { retry, _ in retry == 1 ? .zero : .seconds(3_600) },
            timer: timer
        ) {
            attempts.append(0)
            return attempts.count < 3 ? .failed(TestError(attempts.count)) : .succeeded(3)
        }
        #expect(try await retried.expectValue() == 3)
        // The zero wait too: a completion never starts the next attempt itself.
        #expect(waits.all == [.zero, .seconds(3_600)])
        #expect(attempts.count == 3)
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
