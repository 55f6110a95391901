/// The deadlines of a shard's entries, in a hierarchical timing wheel (Varghese and Lauck, as in
/// Caffeine's `TimerWheel`): it finds the entries whose time has come at O(1) each, without a
/// heap and without looking at the entries that are not due.
///
/// It holds slot numbers (an entry's index in the shard's slab) keyed by a deadline in
/// nanoseconds of the cache's clock. Level `L` has 64 buckets, each 2^(6L) ns wide: 1 ns at
/// level 0, 64 ns, 4.1 µs, 262 µs, 16.8 ms, 1.07 s at level 5, 68.7 s, 73 min, 78 h, 208 days
/// at level 9, and 36.5 years at level 10, of which only 8 buckets are reachable. Eleven levels
/// of six bits cover every non-negative `Int64`, so there is no overflow list: a deadline of
/// `Int64.max` sits in level 10 and moves down as the clock nears it.
///
/// A deadline `d` later than the wheel's time `now` goes to the level of the highest six-bit
/// group in which `d` and `now` differ, into the bucket that `d`'s bits in that group number.
/// So a level's deadlines share every higher bit with `now` and lie in a later bucket than
/// `now` does: a level's occupied buckets never wrap around, every deadline in level `L` is
/// earlier than every deadline in level `L + 1`, and a level-0 bucket holds one exact
/// nanosecond. That last point makes ``expire(upTo:into:)`` exact: as the clock nears a
/// deadline, the deadline moves to ever narrower buckets, down to its own nanosecond, so
/// `expire` never has to choose between firing an entry early and finding it late. Deadlines at
/// or before `now` wait in a separate due list.
///
/// `expire` visits, level by level, only the occupied buckets (a 64-bit mask per level) that
/// start at or before the new time. It fires their due entries and places the others again
/// against the new time, where they land in a strictly lower level (they now share at least one
/// more group with the clock). So an entry moves at most ten times in its life — in practice once
/// for each level boundary the clock crosses while the cache is looked at — and a jump of years
/// costs the occupied buckets passed, never the ticks. A lower bound on the earliest occupied
/// bucket makes an `expire` with nothing to do O(1).
///
/// The per-slot links live in one array indexed by slot, grown on demand: scheduling,
/// rescheduling and cancelling are O(1), allocate nothing per entry and touch no reference counts.
/// One slot's record is 24 bytes; the bucket heads and tails, 5.6 KB, are allocated with the
/// first slot scheduled, so a shard of a cache in which nothing expires pays nothing for them.
@usableFromInline
struct TimerWheel {
    /// One slot's place in the wheel: its deadline, its neighbours in its bucket's list (-1 at
    /// either end) and the bucket (`unscheduled` when it is in none).
    struct Link {
        var deadline: Int64 = 0
        var next: Int32 = TimerWheel.none
        var prev: Int32 = TimerWheel.none
        var bucket: Int32 = TimerWheel.unscheduled
    }

    static let bitsPerLevel = 6
    static let bucketsPerLevel = 1 << bitsPerLevel
    /// `11 * 6 = 66` bits: enough for the 63 of a non-negative `Int64`.
    static let levelCount = 11
    /// The list of slots whose deadline is at or before `now`; the level buckets come first.
    static let dueBucket = Int32(levelCount * bucketsPerLevel)
    /// Marks a slot held aside during `expire`, to be placed again once the time has moved.
    static let pendingBucket = dueBucket + 1
    static let unscheduled: Int32 = -1
    /// The end of a list.
    static let none: Int32 = -1

    /// Indexed by slot; slots never scheduled are past its end.
    private(set) var links: ContiguousArray<Link> = []
    /// The first slot of each bucket's list, `none` when empty: level `L`'s bucket `b` at
    /// `L * 64 + b`, then the due list. Empty (with `tails` and `occupied`) until the first
    /// slot is scheduled.
    private(set) var heads: ContiguousArray<Int32> = []
    /// The last slot of each bucket's list, indexed as `heads`. Slots join at the end, so a
    /// bucket keeps the order they were placed in.
    private(set) var tails: ContiguousArray<Int32> = []
    /// Per level, bit `b` set when bucket `b` of that level is not empty.
    private(set) var occupied: ContiguousArray<UInt64> = []
    /// The wheel's time: the latest time `expire` was given, 0 at first.
    private(set) var now: Int64 = 0
    /// No occupied level bucket starts before this. Only a lower bound: `cancel` leaves it as is,
    /// and `expire` makes it exact again.
    private(set) var earliestStart: Int64 = .max
    private(set) var scheduledCount = 0

    /// An empty wheel at time 0. Allocates nothing.
    @usableFromInline
    init() {}

    /// Allocates the bucket lists, once.
    private mutating func allocateBuckets() {
        heads = ContiguousArray(repeating: Self.none, count: Int(Self.dueBucket) + 1)
        tails = heads
        occupied = ContiguousArray(repeating: 0, count: Self.levelCount)
    }

    /// The number of scheduled slots.
    @usableFromInline var count: Int { scheduledCount }

    /// Whether no slot is scheduled.
    @usableFromInline var isEmpty: Bool { scheduledCount == 0 }

    /// Whether `slot` is scheduled. O(1).
    @usableFromInline
    func isScheduled(_ slot: Int32) -> Bool {
        slot >= 0 && Int(slot) < links.count && links[Int(slot)].bucket != Self.unscheduled
    }

    /// The deadline of `slot`, or `nil` if it is not scheduled. O(1).
    @usableFromInline
    func deadline(of slot: Int32) -> Int64? {
        isScheduled(slot) ? links[Int(slot)].deadline : nil
    }

    /// Schedules `slot`, which must not be scheduled already, to fire at `deadline`. A deadline
    /// at or before the wheel's time fires at the next ``expire(upTo:into:)``.
    ///
    /// O(1); amortised O(1) when `slot` is past every slot seen so far and the links grow.
    @usableFromInline
    mutating func schedule(_ slot: Int32, at deadline: Int64) {
        precondition(slot >= 0, "TimerWheel: negative slot")
        if heads.isEmpty { allocateBuckets() }
        let index = Int(slot)
        if index >= links.count {
            links.append(contentsOf: repeatElement(Link(), count: index + 1 - links.count))
        } else {
            precondition(links[index].bucket == Self.unscheduled, "TimerWheel: slot scheduled twice")
        }
        place(slot, at: deadline)
        scheduledCount += 1
    }

    /// Moves `slot` to `deadline`, earlier or later; schedules it if it was not scheduled. O(1).
    @usableFromInline
    mutating func reschedule(_ slot: Int32, at deadline: Int64) {
        if isScheduled(slot) {
            unlink(slot)
            place(slot, at: deadline)
        } else {
            schedule(slot, at: deadline)
        }
    }

    /// Unschedules `slot` if it is scheduled, and otherwise does nothing. O(1).
    @usableFromInline
    mutating func cancel(_ slot: Int32) {
        guard isScheduled(slot) else { return }
        unlink(slot)
        scheduledCount -= 1
    }

    /// Moves the wheel's time forward to `time` and appends to `fired` every scheduled slot whose
    /// deadline is at or before `time`, unscheduling each. Exact: it returns no slot whose
    /// deadline is later than `time` and misses none that is not.
    ///
    /// They come by deadline, except that slots which shared a bucket wider than a nanosecond,
    /// or the due list, come in the order they were placed there. Slots with equal deadlines
    /// always share a bucket, so they come in the order they were last scheduled or
    /// rescheduled.
    ///
    /// A `time` earlier than the wheel's time leaves the time where it is; it still fires the
    /// slots due by then, which can only be on the due list (O(that list)).
    ///
    /// O(1) when the due list is empty and no bucket starts by `time`. Otherwise the cost is the
    /// due list, plus a check per level, plus the occupied buckets that start by `time` and the
    /// slots in them, each of those slots either fired or placed at least one level lower.
    /// However far `time` jumps, no level is walked tick by tick.
    @usableFromInline
    mutating func expire(upTo time: Int64, into fired: inout [Int32]) {
        guard !heads.isEmpty else {
            now = max(now, time)
            return
        }
        if heads[Int(Self.dueBucket)] != Self.none { fireDue(upTo: time, into: &fired) }
        if time < earliestStart {
            now = max(now, time)
            return
        }
        // Empty the buckets that start by `time`. No slot is placed until the time has moved,
        // so every bucket's start below is still computed against the old `now`.
        var pending = Self.none
        var pendingTail = Self.none
        var nextStart = Int64.max
        for level in 0..<Self.levelCount {
            var bits = occupied[level]
            if bits == 0 { continue }
            let shift = level * Self.bitsPerLevel
            let prefix = Self.truncated(now, below: shift + Self.bitsPerLevel)
            while bits != 0 {
                let index = bits.trailingZeroBitCount
                let start = prefix | (Int64(index) << shift)
                if start > time {
                    nextStart = min(nextStart, start)
                    break
                }
                bits &= bits &- 1
                let bucket = level * Self.bucketsPerLevel + index
                var slot = heads[bucket]
                heads[bucket] = Self.none
                tails[bucket] = Self.none
                while slot != Self.none {
                    let following = links[Int(slot)].next
                    if links[Int(slot)].deadline <= time {
                        links[Int(slot)] = Link()
                        scheduledCount -= 1
                        fired.append(slot)
                    } else {
                        links[Int(slot)].next = Self.none
                        links[Int(slot)].bucket = Self.pendingBucket
                        if pendingTail == Self.none { pending = slot } else { links[Int(pendingTail)].next = slot }
                        pendingTail = slot
                    }
                    slot = following
                }
            }
            occupied[level] = bits
        }
        now = time
        earliestStart = nextStart
        while pending != Self.none {
            let following = links[Int(pending)].next
            place(pending, at: links[Int(pending)].deadline)
            pending = following
        }
    }

    /// `value` with its lowest `bits` bits cleared; 0 when `bits` covers all 63 of a non-negative
    /// value.
    static func truncated(_ value: Int64, below bits: Int) -> Int64 {
        bits >= 63 ? 0 : (value >> bits) << bits
    }

    /// Links `slot`, not in any list, at the end of the bucket that `deadline` belongs in at the current
    /// time, and records the deadline.
    private mutating func place(_ slot: Int32, at deadline: Int64) {
        let bucket: Int
        if deadline <= now {
            bucket = Int(Self.dueBucket)
        } else {
            let differing = UInt64(bitPattern: deadline ^ now)
            let level = (Int64.bitWidth - 1 - differing.leadingZeroBitCount) / Self.bitsPerLevel
            let shift = level * Self.bitsPerLevel
            let index = Int((deadline >> shift) & Int64(Self.bucketsPerLevel - 1))
            bucket = level * Self.bucketsPerLevel + index
            occupied[level] |= 1 << index
            earliestStart = min(earliestStart, Self.truncated(deadline, below: shift))
        }
        let tail = tails[bucket]
        links[Int(slot)] = Link(deadline: deadline, next: Self.none, prev: tail, bucket: Int32(bucket))
        if tail == Self.none { heads[bucket] = slot } else { links[Int(tail)].next = slot }
        tails[bucket] = slot
    }

    /// Takes `slot` out of its bucket's list, clearing the bucket's occupancy bit if it empties,
    /// and marks it unscheduled.
    private mutating func unlink(_ slot: Int32) {
        let link = links[Int(slot)]
        let bucket = Int(link.bucket)
        if link.prev == Self.none { heads[bucket] = link.next } else { links[Int(link.prev)].next = link.next }
        if link.next == Self.none { tails[bucket] = link.prev } else { links[Int(link.next)].prev = link.prev }
        if heads[bucket] == Self.none && bucket < Int(Self.dueBucket) {
            occupied[bucket / Self.bucketsPerLevel] &= ~(1 << (bucket % Self.bucketsPerLevel))
        }
        links[Int(slot)] = Link()
    }

    /// Fires the slots of the due list whose deadline is at or before `time`: all of them
    /// unless `time` is earlier than the wheel's time.
    private mutating func fireDue(upTo time: Int64, into fired: inout [Int32]) {
        var slot = heads[Int(Self.dueBucket)]
        while slot != Self.none {
            let following = links[Int(slot)].next
            if links[Int(slot)].deadline <= time {
                unlink(slot)
                scheduledCount -= 1
                fired.append(slot)
            }
            slot = following
        }
    }
}

// Plain values: arrays of integers.
extension TimerWheel: Sendable {}
