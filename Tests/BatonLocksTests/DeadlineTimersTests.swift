import Foundation
import Testing

@testable import BatonInternals
@testable import BatonLocks

@Suite("DeadlineTimers", .timeLimit(.minutes(1)))
struct DeadlineTimersTests {
    @Test("The heap gives deadlines back earliest first, whatever is armed and disarmed", arguments: 1...5)
    func heapMatchesASortedModel(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var heap = DeadlineHeap()
        var model: [(deadline: ContinuousClock.Instant, id: UInt64)] = []
        let origin = ContinuousClock.now
        var nextID: UInt64 = 0
        let order = Locked<[ContinuousClock.Instant]>([])
        for _ in 0..<2_000 {
            switch random.next() % 3 {
            case 0, 1:
                nextID += 1
                let deadline = origin.advanced(by: .milliseconds(Int64(random.next() % 1_000)))
                heap.insert(deadline: deadline, id: nextID) { order.withValue { $0.append(deadline) } }
                model.append((deadline, nextID))
            default:
                guard !model.isEmpty else { continue }
                let index = Int(random.next() % UInt64(model.count))
                heap.remove(id: model[index].id)
                model.remove(at: index)
            }
            #expect(heap.count == model.count)
            #expect(heap.earliest == model.map(\.deadline).min())
        }
        // Removing an ID that is not armed changes nothing.
        heap.remove(id: 0)
        #expect(heap.count == model.count)
        while let action = heap.popFirst(dueBy: origin.advanced(by: .seconds(2))) { action() }
        #expect(heap.count == 0)
        #expect(order.get() == model.map(\.deadline).sorted())
    }

    @Test("popFirst takes only what is due")
    func popOnlyWhatIsDue() {
        var heap = DeadlineHeap()
        let origin = ContinuousClock.now
        let fired = Locked<[Int]>([])
        for (index, offset) in [30, 10, 20].enumerated() {
            heap.insert(deadline: origin.advanced(by: .milliseconds(offset)), id: UInt64(index + 1)) {
                fired.withValue { $0.append(offset) }
            }
        }
        while let action = heap.popFirst(dueBy: origin.advanced(by: .milliseconds(20))) { action() }
        #expect(fired.get() == [10, 20])
        #expect(heap.count == 1 && heap.earliest == origin.advanced(by: .milliseconds(30)))
    }

    @Test("Armed timers fire in deadline order, an earlier one armed later included; disarmed ones never fire")
    func firesInOrder() async throws {
        let timers = DeadlineTimers()
        let fired = Locked<[String]>([])
        let now = ContinuousClock.now
        let late = timers.arm(now.advanced(by: .milliseconds(40))) { fired.withValue { $0.append("late") } }
        _ = late
        let never = timers.arm(now.advanced(by: .milliseconds(20))) { fired.withValue { $0.append("never") } }
        // Earlier than every armed deadline: the source is set for it.
        _ = timers.arm(now.advanced(by: .milliseconds(5))) { fired.withValue { $0.append("early") } }
        timers.disarm(never)
        #expect(await waitUntil { fired.get().count == 2 })
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

    @Test("A deadline already past fires at once")
    func pastDeadline() async {
        let timers = DeadlineTimers()
        let fired = Locked(false)
        _ = timers.arm(ContinuousClock.now.advanced(by: .seconds(-1))) { fired.withValue { $0 = true } }
        #expect(await waitUntil { fired.get() })
    }
}
