import BatonLocks
import Dispatch
import Foundation
import Testing

@testable import BatonFutures

/// `Future.wait(timeout:)`: a wait that times out takes its callback back out of the future, so
/// that waiting and giving up on a future that stays pending leaves nothing behind; a future that
/// completes around the timeout is reported by its outcome, never as a timeout once it completed.
@Suite(.timeLimit(.minutes(2))) struct TimedFutureWaitTests {
    @Test func aTimedOutWaitLeavesNoCallbackOnThePendingFuture() throws {
        let promise = Promise<Int>()
        promise.future.whenComplete { _ in }  // someone else's callback, which stays
        for timeout in [Duration.milliseconds(1), .milliseconds(10), .zero, .seconds(-1)] {
            #expect(throws: FutureError.timedOut(after: timeout)) { try promise.future.wait(timeout: timeout) }
            #expect(promise.future.callbackCount == 1, "after a wait of \(timeout) timed out")
        }
        // Many waits that give up: still only the one callback.
        for _ in 0..<100 { _ = try? promise.future.wait(timeout: .microseconds(1)) }
        #expect(promise.future.callbackCount == 1)

        promise.succeed(5)
        #expect(try promise.future.wait(timeout: .zero) == 5)
        #expect(try promise.future.wait(timeout: .milliseconds(1)) == 5)
    }

    @Test func aFutureCompletedWhileTheWaiterSleepsReturnsItsValue() throws {
        let promise = Promise<Int>()
        let result = Protected<Result<Int, any Error>?>(nil)
        let waiter = Thread { result.write { $0 = Result { try promise.future.wait(timeout: .seconds(600)) } } }
        waiter.start()
        let deadline = ContinuousClock.now + patience
        while promise.future.callbackCount == 0 && ContinuousClock.now < deadline { usleep(100) }
        #expect(promise.future.callbackCount == 1)
        promise.succeed(8)
        while result.value == nil && ContinuousClock.now < deadline { usleep(100) }
        #expect(try result.value?.get() == 8)
    }

    @Test func aFailedFutureThrowsItsErrorNotATimeout() throws {
        let promise = Promise<Int>()
        DispatchQueue.global().async { promise.fail(TestError(3)) }
        #expect(throws: TestError(3)) { try promise.future.wait(timeout: patience) }
    }

    /// Completions racing the waits' timeouts: a wait either times out on a future that was
    /// pending when it gave up, or returns the value; no callback is left either way.
    @Test func completionsRacingTimeoutsLeaveNothingBehind() {
        var timedOut = 0
        for round in 0..<2_000 {
            let promise = Promise<Int>()
            DispatchQueue.global().async { promise.succeed(round) }
            do {
                #expect(try promise.future.wait(timeout: .microseconds(Int64(round % 50))) == round)
            } catch let error as FutureError {
                #expect(error == FutureError.timedOut(after: .microseconds(Int64(round % 50))))
                timedOut += 1
            } catch {
                Issue.record("unexpected \(error)")
            }
            #expect(promise.future.callbackCount == 0, "round \(round)")
        }
        print("TimedFutureWaitTests: \(timedOut) of 2,000 racing waits timed out")
    }
}
