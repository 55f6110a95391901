import Atomics

/// Expiry: deadlines and idle times checked, expiring entries scheduled on the shard's timer
/// wheel, and the sweeps that release them.
extension ShardStorage {
    @inlinable
    func isExpired(_ i: Int, now: Int64) -> Bool {
        if now >= slots[i].expiresAt { return true }
        if let timeToIdle = expiry.timeToIdle, let lastRead, now &- lastRead.load(i) >= timeToIdle {
            return true
        }
        return false
    }

    /// When slot `i` should next be checked: the earlier of its deadline and its idle
    /// deadline as of its last read; `Int64.max` if it can never expire.
    @inlinable
    func nextCheck(_ i: Int) -> Int64 {
        var check = slots[i].expiresAt
        if let timeToIdle = expiry.timeToIdle, let lastRead {
            let (idleEnd, overflow) = lastRead.load(i).addingReportingOverflow(timeToIdle)
            if !overflow { check = min(check, idleEnd) }
        }
        return check
    }

    /// Puts `slot` in the wheel at its next check, or takes it out if it can never expire.
    @inlinable
    mutating func scheduleExpiry(_ slot: Int32, now: Int64) {
        guard mayExpire else { return }
        let check = nextCheck(Int(slot))
        if check == .max {
            wheel.cancel(slot)
        } else {
            wheel.reschedule(slot, at: check)
        }
    }

    /// Releases this shard's expired entries if any entry can expire and ``writeSweepSpacing``
    /// has passed since a write last did; called by every write.
    @inlinable @inline(__always)
    mutating func sweepIfDue(now: Int64, evicted: inout EvictionBatch<Key, Value>) {
        if mayExpire && now >= nextSweep {
            nextSweep = now &+ writeSweepSpacing
            if !wheel.isEmpty { removeExpired(now: now, evicted: &evicted) }
        }
    }

    /// Removes every expired entry, found through the wheel: O(expired entries, plus idle
    /// entries whose check came due but that were read since, plus the wheel's buckets
    /// passed), not O(n).
    @usableFromInline
    mutating func removeExpired(now: Int64, evicted: inout EvictionBatch<Key, Value>) {
        guard mayExpire, !wheel.isEmpty else { return }
        var due: [Int32] = []
        wheel.expire(upTo: now, into: &due)
        for slot in due {
            if isExpired(Int(slot), now: now) {
                let old = removeSlot(slot)
                evicted.append(old.key, old.value, .expired)
            } else {
                // Read since it was scheduled: check again at its new idle deadline.
                wheel.schedule(slot, at: nextCheck(Int(slot)))
            }
        }
    }

    /// Whether no entry of this shard can expire (so no sweep is needed for it).
    @inlinable var hasNothingToExpire: Bool { wheel.isEmpty }
}

/// How often, in clock nanoseconds, writes to a shard sweep its expired entries: about 134 ms.
@usableFromInline let writeSweepSpacing: Int64 = 1 << 27
