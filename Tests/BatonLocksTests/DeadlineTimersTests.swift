import Foundation
import Testing

@testable import BatonInternals
@testable import BatonLocks

@Suite("DeadlineTimers", .timeLimit(.minutes(1)))
struct DeadlineTimersTests {
    @Test("The heap gives deadlines back earliest first, whatever is armed and disarmed", arguments: 1...5)
    func heapMatchesASortedModel(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let heap = DeadlineHeap()
        var model: [DeadlineTimer] = []
        let order = Locked<[Int64]>([])
        for _ in 0..<2_000 {
            switch random.next() % 3 {
            case 0, 1:
                let deadline = Int64(random.next() % 1_000)
                let timer = ActionTimer(deadline: deadline) { order.withValue { $0.append(deadline) } }
                heap.insert(timer)
                model.append(timer)
            default:
                guard !model.isEmpty else { continue }
                let index = Int(random.next() % UInt64(model.count))
                heap.remove(model[index])
                // Removing a timer that is no longer armed changes nothing.
                heap.remove(model[index])
                model.remove(at: index)
            }
            #expect(heap.count == model.count)
            #expect(heap.earliest == model.map(\.deadline).min())
        }
        while let timer = heap.popFirst(dueBy: 2_000) { timer.fire() }
        #expect(heap.count == 0)
        #expect(order.get() == model.map(\.deadline).sorted())
        // A timer that fired is no longer armed: removing it changes nothing.
        if let fired = model.first { heap.remove(fired) }
        #expect(heap.count == 0)
    }

    @Test("popFirst takes only what is due")
    func popOnlyWhatIsDue() {
        let heap = DeadlineHeap()
        let fired = Locked<[Int64]>([])
        for deadline: Int64 in [30, 10, 20] {
            heap.insert(ActionTimer(deadline: deadline) { fired.withValue { $0.append(deadline) } })
        }
        while let timer = heap.popFirst(dueBy: 20) { timer.fire() }
        #expect(fired.get() == [10, 20])
        #expect(heap.count == 1 && heap.earliest == 30)
    }

    @Test("Armed timers fire in deadline order, an earlier one armed later included; disarmed ones never fire")
    func firesInOrder() async throws {
        let timers = DeadlineTimers()
        let fired = Locked<[String]>([])
        let now = ContinuousClock.now
        timers.arm(now.advanced(by: .milliseconds(40))) { fired.withValue { $0.append("late") } }
        let never = timers.arm(now.advanced(by: .milliseconds(20))) { fired.withValue { $0.append("never") } }
        // Earlier than every armed deadline: the source is set for it.
        timers.arm(now.advanced(by: .milliseconds(5))) { fired.withValue { $0.append("early") } }
        timers.disarm(never)
        #expect(await waitUntil { fired.withValue { $0.count } == 2 })
        #expect(fired.get() == ["early", "late"])
        #expect(timers.armedCount == 0)
    }

    @Test("A disarmed timer leaves nothing armed")
    func disarmLeavesNothing() {
        let timers = DeadlineTimers()
        let tokens = (0..<100).map { index in
            timers.arm(ContinuousClock.now.advanced(by: .seconds(60 + index))) {}
        }
        #expect(timers.armedCount == 100)
        for token in tokens { timers.disarm(token) }
        #expect(timers.armedCount == 0)
    }

    @Test("disarm says whether the timer was still armed: true before it fires, false once it has")
    func disarmSaysWhetherItWasArmed() async {
        let timers = DeadlineTimers()
        let fired = Locked(false)
        let armed = timers.arm(ContinuousClock.now.advanced(by: .seconds(60))) {}
        #expect(timers.disarm(armed))
        #expect(!timers.disarm(armed))
        let due = timers.arm(ContinuousClock.now) { fired.withValue { $0 = true } }
        #expect(await waitUntil { fired.get() })
        #expect(!timers.disarm(due))
        #expect(timers.armedCount == 0)
    }

    @Test("The timers' clock reads what ContinuousClock reads, on the scale deadlines are placed on")
    func nanosecondScaleAgreesWithContinuousClock() {
        for _ in 0..<1_000 {
            let before = ContinuousNanoseconds.now
            let instant = ContinuousNanoseconds.at(.now)
            let after = ContinuousNanoseconds.now
            // The scale's zero is read twice, once per clock, within a microsecond; the reads
            // here are a few microseconds apart on a busy machine at most.
            #expect(instant >= before - 1_000_000 && instant <= after + 1_000_000, "\(before) \(instant) \(after)")
            #expect(after >= before)
        }
        let instant = ContinuousClock.now.advanced(by: .seconds(5))
        #expect(ContinuousNanoseconds.instant(ContinuousNanoseconds.at(instant)) == instant)
    }

    @Test("A scheduled action whose delay passes the scale's bound never comes; one of zero or less runs at once")
    func scheduledActionPastTheScalesBound() async {
        let ran = Locked<[String]>([])
        // Added to now, these overflow the nanosecond scale; wrapped round, they would be due.
        let far = ScheduledAction(after: .seconds(Int64.max)) { ran.withValue { $0.append("far") } }
        let justPast = ScheduledAction(after: .nanoseconds(Int64.max)) { ran.withValue { $0.append("just past") } }
        _ = ScheduledAction(after: .seconds(-Int64.max)) { ran.withValue { $0.append("long ago") } }
        _ = ScheduledAction(after: .zero) { ran.withValue { $0.append("now") } }
        // Every due action runs in deadline order on the timers' queue: once the one due now has
        // run, a far one taken as due would have run before it.
        #expect(await waitUntil { ran.get().contains("now") })
        #expect(Set(ran.get()) == ["long ago", "now"])
        #expect(far.cancel(), "the far action was not armed until the end of time")
        #expect(justPast.cancel(), "the action just past the bound was not armed until the end of time")
    }

    @Test("A deadline already past fires at once")
    func pastDeadline() async {
        let timers = DeadlineTimers()
        let fired = Locked(false)
        timers.arm(ContinuousClock.now.advanced(by: .seconds(-1))) { fired.withValue { $0 = true } }
        #expect(await waitUntil { fired.get() })
    }
}
