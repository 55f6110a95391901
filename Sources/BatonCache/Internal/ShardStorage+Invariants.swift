extension ShardStorage {
    /// Problems with the shard's structure, for tests: the list, the index, the free list and
    /// the cost must agree. Empty when all is well.
    func invariantViolations() -> [String] {
        var problems: [String] = []
        var seen = 0
        var cost = 0
        var windowSeen = 0
        for (list, start, end) in [("list", oldest, newest), ("window", windowOldest, windowNewest)] {
            var slot = start
            var previous = noSlot
            let before = seen
            while slot != noSlot, seen <= slots.count {
                let i = Int(slot)
                guard index.hasEntry(inSlot: slot) else {
                    problems.append("slot \(slot) is on the \(list) but empty")
                    break
                }
                if index.slot(of: index.key(ofSlot: slot)) != slot {
                    problems.append("index does not point at slot \(slot)")
                }
                if slots[i].older != previous { problems.append("slot \(slot) has a wrong back link") }
                if slots[i].inWindow != (list == "window") { problems.append("slot \(slot) is on the wrong list") }
                cost += slots[i].cost
                seen += 1
                previous = slot
                slot = slots[i].newer
            }
            if previous != end { problems.append("the \(list) does not end at its newest entry") }
            if list == "window" { windowSeen = seen - before }
        }
        if windowSeen != windowCount { problems.append("window holds \(windowSeen) entries, counted \(windowCount)") }
        if policy != .tinyLFU && windowSeen != 0 { problems.append("a \(policy) shard has a window") }
        if hand != noSlot && (!index.hasEntry(inSlot: hand) || slots[Int(hand)].inWindow) {
            problems.append("the hand is not on the main list")
        }
        if seen != index.count { problems.append("lists hold \(seen) entries, index \(index.count)") }
        if cost != totalCost { problems.append("costs add up to \(cost), recorded \(totalCost)") }
        var free = 0
        var slot = freeSlot
        while slot != noSlot, free <= slots.count {
            if index.hasEntry(inSlot: slot) { problems.append("free slot \(slot) holds a key") }
            free += 1
            slot = slots[Int(slot)].older
        }
        if free + seen != slots.count { problems.append("\(free) free + \(seen) used != \(slots.count) slots") }
        var expiring = 0
        index.forEach { _, _, slot in
            guard nextCheck(Int(slot)) != .max else { return }
            expiring += 1
            if !wheel.isScheduled(slot) { problems.append("slot \(slot) can expire but is not scheduled") }
        }
        if wheel.count != expiring { problems.append("the wheel holds \(wheel.count) slots, \(expiring) can expire") }
        problems += wheel.invariantViolations().map { "wheel: \($0)" }
        problems += index.invariantViolations().map { "index: \($0)" }
        return problems
    }
}
