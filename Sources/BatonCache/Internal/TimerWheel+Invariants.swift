extension TimerWheel {
    /// Problems in the structure, for tests: broken links, a slot in the wrong bucket or in
    /// none, occupancy bits that disagree with the lists, a wrong count, an `earliestStart`
    /// above an occupied bucket or not after the time. Empty when the wheel is consistent.
    /// O(slots + buckets).
    @usableFromInline
    func invariantViolations() -> [String] {
        var problems: [String] = []
        if now < 0 { problems.append("time \(now) is negative") }
        if earliestStart != .max && earliestStart <= now {
            problems.append("earliestStart \(earliestStart) is not after \(now)")
        }
        var listed = [Bool](repeating: false, count: links.count)
        var seen = 0
        for bucket in 0...Int(Self.dueBucket) where !heads.isEmpty {
            let isDue = bucket == Int(Self.dueBucket)
            let level = bucket / Self.bucketsPerLevel
            let index = bucket % Self.bucketsPerLevel
            let name = isDue ? "the due list" : "bucket \(index) of level \(level)"
            if !isDue {
                let marked = occupied[level] & (1 << index) != 0
                if marked != (heads[bucket] != Self.none) {
                    problems.append("\(name): occupancy bit \(marked), list empty \(heads[bucket] == Self.none)")
                }
            }
            var previous = Self.none
            var slot = heads[bucket]
            while slot != Self.none {
                guard slot >= 0 && Int(slot) < links.count else {
                    problems.append("\(name): slot \(slot) out of range")
                    break
                }
                guard !listed[Int(slot)] else {
                    problems.append("\(name): slot \(slot) listed twice")
                    break
                }
                listed[Int(slot)] = true
                seen += 1
                let link = links[Int(slot)]
                if link.prev != previous { problems.append("\(name): slot \(slot) prev \(link.prev), not \(previous)") }
                if link.bucket != Int32(bucket) { problems.append("\(name): slot \(slot) says bucket \(link.bucket)") }
                if isDue {
                    if link.deadline > now { problems.append("\(name): slot \(slot) not due at \(now)") }
                } else {
                    problems += placementProblems(link.deadline, level: level, index: index, name: "slot \(slot)")
                }
                previous = slot
                slot = link.next
            }
            if tails[bucket] != previous { problems.append("\(name): tail \(tails[bucket]), not \(previous)") }
        }
        for (slot, link) in links.enumerated() where link.bucket != Self.unscheduled && !listed[slot] {
            problems.append("slot \(slot) says bucket \(link.bucket) but is in no list")
        }
        if seen != scheduledCount { problems.append("count \(scheduledCount), but \(seen) slots listed") }
        return problems
    }

    /// What is wrong with `deadline` sitting in bucket `index` of `level`, against `now` and
    /// `earliestStart`.
    private func placementProblems(_ deadline: Int64, level: Int, index: Int, name: String) -> [String] {
        let shift = level * Self.bitsPerLevel
        let higher = shift + Self.bitsPerLevel
        var problems: [String] = []
        if deadline <= now { problems.append("\(name): deadline \(deadline) is not after \(now)") }
        if Self.truncated(deadline, below: higher) != Self.truncated(now, below: higher) {
            problems.append("\(name): deadline \(deadline) differs from \(now) above level \(level)")
        }
        let group = Int((deadline >> shift) & Int64(Self.bucketsPerLevel - 1))
        let nowGroup = Int((now >> shift) & Int64(Self.bucketsPerLevel - 1))
        if group != index || group <= nowGroup {
            problems.append("\(name): deadline \(deadline) in bucket \(index) of level \(level) at \(now)")
        }
        if Self.truncated(deadline, below: shift) < earliestStart {
            problems.append("\(name): bucket starts before earliestStart \(earliestStart)")
        }
        return problems
    }
}
