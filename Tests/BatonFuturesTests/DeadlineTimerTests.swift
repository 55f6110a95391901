import BatonFutures
import BatonTestSupport
import Dispatch
import Testing

@testable import BatonLocks

/// The timers behind `Future.timeout(after:)` and `Fetcher`'s request timeouts: they wait on the
/// process's deadline heap, a timer cancelled in time leaves it at once, and a body runs once,
/// on a global queue rather than the heap's own. One test at a time: each counts the heap's
/// timers.
@Suite(.serialized, .offTheCooperativePool, .timeLimit(.minutes(1))) struct DeadlineTimerTests {
    static let count = 1_000

    /// Timeouts whose sources complete in time take their timers out of the heap as they do, an
    /// hour before the deadline: nothing stays armed (a Dispatch `asyncAfter` would stay queued
    /// for the hour). Other tests' timers may come and go meanwhile, hence the slack.
    @Test func timeoutsCompletedInTimeLeaveNoTimerArmed() {
        let before = DeadlineTimers.shared.armedCount
        let sources = (0..<Self.count).map { _ in Promise<Int>() }
        let limited = sources.map { $0.future.timeout(after: .seconds(3_600)) }
        let armed = DeadlineTimers.shared.armedCount - before
        #expect(armed >= Self.count - Self.count / 10, "each timeout waits on the deadline heap")
        for (index, source) in sources.enumerated() { source.succeed(index) }
        #expect(limited.allSatisfy { $0.isCompleted })
        let left = DeadlineTimers.shared.armedCount - before
        #expect(left <= Self.count / 10, "\(left) timers still armed after their futures completed")
    }

    /// A timer's body runs once, and not on the heap's own serial queue, which every timed wait
    /// of the process shares: a body that blocks until a later timer's body has run does not
    /// stop that one from running.
    @Test func aTimersBodyRunsOnceAndABlockingBodyHoldsUpNoOtherTimer() {
        let runs = Protected(0)
        let second = DispatchSemaphore(value: 0)
        let firstSawSecond = DispatchSemaphore(value: 0)
        let first = DeadlineTimer.schedule(after: .zero) {
            runs.write { $0 += 1 }
            if second.wait(timeout: .now() + .seconds(20)) == .success { firstSawSecond.signal() }
        }
        let later = DeadlineTimer.schedule(after: .milliseconds(1)) { second.signal() }
        #expect(
            firstSawSecond.wait(timeout: .now() + .seconds(30)) == .success, "the blocked body held up the next timer")
        first.cancel()
        later.cancel()
        #expect(runs.value == 1)
    }

    /// A cancelled timer is out of the heap when `cancel` returns, so nothing is left that
    /// could run its body.
    @Test func aCancelledTimerLeavesTheHeapAtOnce() {
        let before = DeadlineTimers.shared.armedCount
        let timers = (0..<Self.count).map { _ in DeadlineTimer.schedule(after: .seconds(3_600)) {} }
        #expect(DeadlineTimers.shared.armedCount - before >= Self.count - Self.count / 10)
        for timer in timers { timer.cancel() }
        #expect(DeadlineTimers.shared.armedCount - before <= Self.count / 10)
    }
}
