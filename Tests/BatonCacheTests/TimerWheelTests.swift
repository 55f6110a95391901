import BatonInternals
import BatonTestSupport
import Testing

@testable import BatonCache

private let millisecond: Int64 = 1_000_000
private let second: Int64 = 1_000_000_000
private let hour: Int64 = 3_600 * second
private let day: Int64 = 24 * hour
private let year: Int64 = 365 * day

/// The draws the wheel tests make from a seeded generator.
extension SplitMix64 {
    /// A value in `0..<bound`; `bound` > 0.
    mutating func below(_ bound: Int64) -> Int64 {
        Int64(next() % UInt64(bound))
    }

    /// A value in `0..<2^k` for a `k` drawn uniformly from `0...maxBits`: spread evenly over
    /// the orders of magnitude, from nanoseconds up.
    mutating func magnitude(maxBits: Int) -> Int64 {
        let bits = Int(below(Int64(maxBits) + 1))
        return bits == 0 ? 0 : below(Int64(1) << bits)
    }
}

/// What `expire(upTo:)` fires, sorted.
private func fire(_ wheel: inout TimerWheel, upTo now: Int64) -> [Int32] {
    var fired: [Int32] = []
    wheel.expire(upTo: now, into: &fired)
    return fired.sorted()
}

/// `a + b`, or `Int64.max` where that overflows.
private func saturatingSum(_ a: Int64, _ b: Int64) -> Int64 {
    let (sum, overflow) = a.addingReportingOverflow(b)
    return overflow ? .max : sum
}

@Suite("Timer wheel")
struct TimerWheelTests {
    /// One deadline for each order of magnitude the cache uses, from level 0 to level 9.
    static let deadlines: [Int64] = [1, 100 * millisecond, 10 * second, hour, 2 * day, 100 * day]

    @Test("a slot fires at its deadline and not one nanosecond before, at every level", arguments: deadlines)
    func firesAtItsDeadline(deadline: Int64) {
        var wheel = TimerWheel()
        wheel.schedule(7, at: deadline)
        #expect(wheel.count == 1)
        #expect(wheel.deadline(of: 7) == deadline)
        #expect(fire(&wheel, upTo: deadline - 1) == [])
        #expect(wheel.isScheduled(7))
        #expect(wheel.invariantViolations() == [])
        #expect(fire(&wheel, upTo: deadline) == [7])
        #expect(wheel.isEmpty)
        #expect(!wheel.isScheduled(7))
        #expect(wheel.deadline(of: 7) == nil)
        #expect(fire(&wheel, upTo: deadline + 1) == [])
        #expect(wheel.invariantViolations() == [])
    }

    @Test(
        "time that approaches a deadline in halving steps moves the slot down the levels and fires it exactly",
        arguments: deadlines)
    func firesAfterCascading(deadline: Int64) {
        var wheel = TimerWheel()
        wheel.schedule(3, at: deadline)
        wheel.schedule(4, at: deadline + 1)
        var now: Int64 = 0
        while deadline - now > 1 {
            now += (deadline - now) / 2
            #expect(fire(&wheel, upTo: now) == [], "fired early at \(now)")
            #expect(wheel.invariantViolations() == [])
        }
        #expect(now == deadline - 1 || deadline == 1)
        #expect(fire(&wheel, upTo: deadline) == [3])
        #expect(wheel.deadline(of: 4) == deadline + 1)
        #expect(fire(&wheel, upTo: deadline) == [])
        #expect(fire(&wheel, upTo: deadline + 1) == [4])
        #expect(wheel.isEmpty)
        #expect(wheel.invariantViolations() == [])
    }

    /// `expire(upTo:)` moves the wheel's time forward whether or not a bucket starts by then,
    /// and never back; a deadline at or before that time then waits on the due list.
    @Test("expire moves the wheel's time to the time given, with buckets to empty or without, never back")
    func expireMovesTheTime() {
        var wheel = TimerWheel()
        wheel.schedule(1, at: 100)
        wheel.schedule(2, at: hour)
        #expect(fire(&wheel, upTo: 50) == [])  // no bucket starts by 50
        #expect(wheel.now == 50)
        #expect(fire(&wheel, upTo: 10 * second) == [1])  // buckets emptied on the way
        #expect(wheel.now == 10 * second)
        #expect(fire(&wheel, upTo: second) == [])  // an earlier time leaves it where it is
        #expect(wheel.now == 10 * second)
        wheel.schedule(3, at: 5 * second)  // already past: due at the next expire
        #expect(fire(&wheel, upTo: 10 * second) == [3])
        #expect(wheel.deadline(of: 2) == hour)
        #expect(wheel.invariantViolations() == [])
    }

    @Test("a deadline near Int64.max stays scheduled through centuries and fires exactly at it")
    func farDeadline() {
        var wheel = TimerWheel()
        wheel.schedule(1, at: .max - 1)
        wheel.schedule(2, at: .max)
        for now in [day, 10 * year, 100 * year, 250 * year, 292 * year] {
            #expect(fire(&wheel, upTo: now) == [], "fired at \(now)")
            #expect(wheel.count == 2)
            #expect(wheel.invariantViolations() == [])
        }
        #expect(fire(&wheel, upTo: .max - 2) == [])
        #expect(wheel.deadline(of: 1) == Int64.max - 1)
        #expect(fire(&wheel, upTo: .max - 1) == [1])
        #expect(fire(&wheel, upTo: .max) == [2])
        #expect(wheel.isEmpty)
        #expect(wheel.invariantViolations() == [])
    }

    @Test("a hundred deadlines one nanosecond apart fire one per nanosecond")
    func adjacentDeadlines() {
        var wheel = TimerWheel()
        let base = 5 * second
        for slot in (0..<100).reversed() {
            wheel.schedule(Int32(slot), at: base + Int64(slot))
        }
        #expect(fire(&wheel, upTo: base - 1) == [])
        for slot in 0..<100 {
            #expect(fire(&wheel, upTo: base + Int64(slot)) == [Int32(slot)])
        }
        #expect(wheel.isEmpty)
        #expect(wheel.invariantViolations() == [])
    }

    @Test(
        "slots with equal deadlines fire in the order they were last scheduled, through every level",
        arguments: deadlines)
    func equalDeadlinesKeepTheirOrder(base: Int64) {
        var wheel = TimerWheel()
        let deadline = base + 12_345
        for slot: Int32 in [5, 3, 9, 1] {
            wheel.schedule(slot, at: deadline)
        }
        var now = deadline / 3
        #expect(fire(&wheel, upTo: now) == [])
        wheel.schedule(7, at: deadline)
        wheel.reschedule(3, at: deadline)
        while deadline - now > 1 {
            now += (deadline - now) / 2
            #expect(fire(&wheel, upTo: now) == [])
        }
        var fired: [Int32] = []
        wheel.expire(upTo: deadline, into: &fired)
        #expect(fired == [5, 9, 1, 7, 3])
    }

    @Test("slots in different one-nanosecond buckets fire by deadline")
    func firesByDeadline() {
        var wheel = TimerWheel()
        let base = 64 * second
        #expect(fire(&wheel, upTo: base) == [])
        var random = SplitMix64(seed: 42)
        var offsets = Array(Int64(1)...50)
        offsets.shuffle(using: &random)
        for offset in offsets {
            wheel.schedule(Int32(100 - offset), at: base + offset)
        }
        var fired: [Int32] = []
        wheel.expire(upTo: base + 50, into: &fired)
        #expect(fired == (1...50).map { Int32(100 - $0) })
    }

    @Test("a past deadline fires at the next expire; a time earlier than the wheel's fires only what it reaches")
    func pastDeadlines() {
        var wheel = TimerWheel()
        #expect(fire(&wheel, upTo: 1_000) == [])
        wheel.schedule(1, at: 1_000)
        wheel.schedule(2, at: 400)
        wheel.schedule(3, at: -5)
        wheel.schedule(4, at: 1_001)
        #expect(wheel.invariantViolations() == [])
        #expect(fire(&wheel, upTo: 10) == [3])
        #expect(wheel.invariantViolations() == [])
        #expect(fire(&wheel, upTo: 1_000) == [1, 2])
        #expect(fire(&wheel, upTo: 1_000) == [])
        #expect(fire(&wheel, upTo: 1_001) == [4])
        wheel.schedule(5, at: 0)
        #expect(wheel.deadline(of: 5) == 0)
        #expect(fire(&wheel, upTo: 1_001) == [5])
        #expect(wheel.isEmpty)
        #expect(wheel.invariantViolations() == [])
    }

    @Test("cancel unschedules a slot at any level; cancelling an unscheduled slot does nothing")
    func cancel() {
        var wheel = TimerWheel()
        for (slot, deadline) in Self.deadlines.enumerated() {
            wheel.schedule(Int32(slot), at: deadline)
        }
        wheel.cancel(1)
        wheel.cancel(3)
        wheel.cancel(5)
        wheel.cancel(3)
        wheel.cancel(40)
        wheel.cancel(-1)
        #expect(wheel.count == 3)
        #expect(!wheel.isScheduled(3))
        #expect(wheel.deadline(of: 3) == nil)
        #expect(wheel.invariantViolations() == [])
        #expect(fire(&wheel, upTo: 200 * day) == [0, 2, 4])
        #expect(wheel.isEmpty)

        // A slot that has already moved down to a finer level.
        wheel.schedule(0, at: 300 * day + hour)
        wheel.schedule(1, at: 300 * day + hour + 1)
        #expect(fire(&wheel, upTo: 300 * day + hour - 1) == [])
        wheel.cancel(0)
        #expect(wheel.invariantViolations() == [])
        #expect(fire(&wheel, upTo: 300 * day + hour) == [])
        #expect(fire(&wheel, upTo: 300 * day + hour + 1) == [1])
        #expect(wheel.invariantViolations() == [])
    }

    @Test("reschedule moves a slot earlier or later across levels, or schedules it")
    func reschedule() {
        var wheel = TimerWheel()
        wheel.schedule(1, at: 2 * day)
        wheel.schedule(2, at: millisecond)
        wheel.schedule(3, at: hour)
        wheel.reschedule(1, at: 100 * millisecond)  // earlier: level 8 to level 4
        wheel.reschedule(2, at: hour + 5)  // later: level 3 to level 7
        wheel.reschedule(4, at: 10 * second)  // not scheduled: schedules it
        #expect(wheel.count == 4)
        #expect(wheel.deadline(of: 1) == 100 * millisecond)
        #expect(wheel.invariantViolations() == [])
        #expect(fire(&wheel, upTo: millisecond) == [])
        #expect(fire(&wheel, upTo: 100 * millisecond - 1) == [])
        #expect(fire(&wheel, upTo: 100 * millisecond) == [1])
        #expect(fire(&wheel, upTo: 10 * second) == [4])

        // Slot 3 has moved to a finer level by now; move it later, then back earlier.
        #expect(fire(&wheel, upTo: hour - second) == [])
        wheel.reschedule(3, at: 2 * day)
        #expect(fire(&wheel, upTo: hour) == [])
        #expect(fire(&wheel, upTo: hour + 4) == [])
        #expect(fire(&wheel, upTo: hour + 5) == [2])
        wheel.reschedule(3, at: hour + 10)
        #expect(fire(&wheel, upTo: hour + 9) == [])
        #expect(fire(&wheel, upTo: hour + 10) == [3])

        // To the past: it fires at the next expire.
        wheel.schedule(6, at: day)
        wheel.reschedule(6, at: 0)
        #expect(fire(&wheel, upTo: hour + 10) == [6])
        #expect(wheel.isEmpty)
        #expect(fire(&wheel, upTo: 3 * day) == [])
        #expect(wheel.invariantViolations() == [])
    }

    @Test("a jump of ten years fires everything due and nothing else")
    func largeJump() {
        var random = SplitMix64(seed: 0x7135_2024)
        var wheel = TimerWheel()
        var deadlines: [Int64] = []
        for slot in 0..<5_000 {
            let deadline = 1 + random.magnitude(maxBits: 59)  // up to 18 years
            deadlines.append(deadline)
            wheel.schedule(Int32(slot), at: deadline)
        }
        let jump = 10 * year
        let due = deadlines.indices.filter { deadlines[$0] <= jump }.map { Int32($0) }
        #expect(!due.isEmpty && due.count < deadlines.count)
        #expect(fire(&wheel, upTo: jump) == due)
        #expect(wheel.count == deadlines.count - due.count)
        for (slot, deadline) in deadlines.enumerated() where deadline > jump {
            #expect(wheel.deadline(of: Int32(slot)) == deadline)
        }
        #expect(wheel.invariantViolations() == [])
        let rest = deadlines.indices.filter { deadlines[$0] > jump }.map { Int32($0) }
        #expect(fire(&wheel, upTo: 20 * year) == rest)
        #expect(wheel.isEmpty)
        #expect(wheel.invariantViolations() == [])
    }

    @Test("20,000 random operations agree with a table of deadlines")
    func randomModel() {
        var random = SplitMix64(seed: 0x5EED_0001)
        var wheel = TimerWheel()
        let slotCount: Int64 = 300
        var model = [Int64?](repeating: nil, count: Int(slotCount))  // slot -> deadline
        var now: Int64 = 0  // the latest time given to expire
        var expires = 0
        var fires = 0

        /// A deadline around `now`: mostly ahead by 1 ns to 2^52 ns (52 days), sometimes past,
        /// exactly now, next to another slot's deadline, or near Int64.max.
        func randomDeadline() -> Int64 {
            switch random.below(100) {
            case 0..<8: return now - random.magnitude(maxBits: 40)
            case 8..<12: return now
            case 12..<20:
                if let other = model[Int(random.below(slotCount))] { return other + random.below(3) - 1 }
                return now + 1
            case 20..<23: return .max - random.below(1_000)
            default: return saturatingSum(now, 1 + random.magnitude(maxBits: 52))
            }
        }

        /// A time to expire up to: mostly ahead of `now`, sometimes exactly at or one before a
        /// scheduled deadline, now itself, earlier than now, or a jump of days to a year.
        func randomTime() -> Int64 {
            switch random.below(100) {
            case 0..<20:
                guard let deadline = model[Int(random.below(slotCount))], deadline < .max - year else { return now }
                return deadline - random.below(2)
            case 20..<30: return now
            case 30..<35: return now - random.magnitude(maxBits: 40)
            case 35..<37: return now + day + random.below(year)
            default: return now + random.magnitude(maxBits: 44)
            }
        }

        for operation in 0..<20_000 {
            let slot = Int32(random.below(slotCount))
            switch random.below(100) {
            case 0..<40:
                let deadline = randomDeadline()
                if model[Int(slot)] == nil && random.below(2) == 0 {
                    wheel.schedule(slot, at: deadline)
                } else {
                    wheel.reschedule(slot, at: deadline)
                }
                model[Int(slot)] = deadline
            case 40..<55:
                wheel.cancel(slot)
                model[Int(slot)] = nil
            default:
                let time = randomTime()
                let expected = model.indices.filter { model[$0].map { $0 <= time } ?? false }.map { Int32($0) }
                let fired = fire(&wheel, upTo: time)
                guard fired == expected else {
                    Issue.record("operation \(operation): expire(upTo: \(time)) fired \(fired), expected \(expected)")
                    return
                }
                for slot in fired { model[Int(slot)] = nil }
                now = max(now, time)
                expires += 1
                fires += fired.count
                // The full structural check is O(buckets + slots): every eighth expire keeps
                // the run short under the thread sanitizer.
                if expires % 8 == 0 {
                    let problems = wheel.invariantViolations()
                    guard problems.isEmpty else {
                        Issue.record("operation \(operation): \(problems)")
                        return
                    }
                }
            }
            let scheduled = model.count { $0 != nil }
            guard wheel.count == scheduled, wheel.deadline(of: slot) == model[Int(slot)] else {
                let found = wheel.deadline(of: slot).map { "\($0)" } ?? "none"
                let expected = model[Int(slot)].map { "\($0)" } ?? "none"
                Issue.record(
                    "operation \(operation): count \(wheel.count), expected \(scheduled); slot \(slot) deadline \(found), expected \(expected)"
                )
                return
            }
        }
        #expect(wheel.invariantViolations().isEmpty)
        // The run exercised what it is meant to.
        #expect(expires > 8_000)
        #expect(fires > 2_000)
        #expect(now > 100 * day)
    }

    @Test("slots are reused after firing and after cancelling, and the links grow for large slots")
    func slotReuse() {
        var wheel = TimerWheel()
        wheel.schedule(0, at: 10)
        wheel.schedule(1, at: 20)
        #expect(fire(&wheel, upTo: 10) == [0])
        wheel.schedule(0, at: 30)  // fired: free to schedule again
        wheel.cancel(1)
        wheel.schedule(1, at: 25)  // cancelled: free to schedule again
        #expect(wheel.invariantViolations() == [])
        #expect(fire(&wheel, upTo: 24) == [])
        #expect(fire(&wheel, upTo: 25) == [1])
        #expect(fire(&wheel, upTo: 29) == [])
        #expect(fire(&wheel, upTo: 30) == [0])

        // Cancelled and scheduled again in the same bucket: it fires once.
        wheel.schedule(2, at: 40)
        wheel.cancel(2)
        wheel.schedule(2, at: 40)
        #expect(wheel.count == 1)
        #expect(fire(&wheel, upTo: 40) == [2])

        wheel.schedule(100_000, at: 50)
        #expect(wheel.isScheduled(100_000))
        #expect(!wheel.isScheduled(99_999))
        #expect(fire(&wheel, upTo: 50) == [100_000])
        wheel.schedule(100_000, at: 60)
        #expect(fire(&wheel, upTo: 60) == [100_000])
        #expect(wheel.isEmpty)
        #expect(wheel.invariantViolations() == [])
    }
}
