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

    /// "Full jitter": each delay is uniform between zero and the exponential delay (capped at
    /// the maximum), not merely within those bounds. 20,000 draws per retry: their mean is within
    /// 5% of half the bound (the standard error is 0.2%), and each tenth of the range gets
    /// 8–12% of them (the standard error is 0.2 points).
    @Test(arguments: [1, 3, 6])
    func jitterIsUniformBetweenZeroAndTheExponentialDelay(_ retry: Int) {
        let jittered = Backoff.jittered(initial: .milliseconds(100), maximum: .seconds(2))
        let bound = Backoff.exponential(initial: .milliseconds(100), maximum: .seconds(2)).delay(beforeRetry: retry)
        let boundSeconds = Double(bound.components.seconds) + Double(bound.components.attoseconds) / 1e18
        let draws = 20_000
        var sum = 0.0
        var tenths = [Int](repeating: 0, count: 10)
        for _ in 0..<draws {
            let delay = jittered.delay(beforeRetry: retry)
            let seconds = Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18
            #expect(seconds >= 0 && seconds <= boundSeconds)
            sum += seconds
            tenths[min(9, Int(seconds / boundSeconds * 10))] += 1
        }
        let mean = sum / Double(draws)
        #expect(
            abs(mean - boundSeconds / 2) < 0.05 * boundSeconds / 2, "mean \(mean) s for a bound of \(boundSeconds) s")
        for (tenth, count) in tenths.enumerated() {
            #expect((draws * 8 / 100...draws * 12 / 100).contains(count), "tenth \(tenth) got \(count) of \(draws)")
        }
    }
}
