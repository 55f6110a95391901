import Atomics

/// Hooks for the tests: the background sweep held back or observed, and the structure checked.
extension MemoryCache {
    /// Whether a background sweep is scheduled (for tests).
    var isSweepScheduled: Bool { sweepScheduled.load(ordering: .relaxed) }

    /// For tests that move a clock by hand and count what expires: marks a sweep as scheduled
    /// so that none ever is, and expired entries leave only through writes, lookups and
    /// ``removeExpired()``. Call it before the first write.
    func holdBackgroundSweep() {
        sweepScheduled.store(true, ordering: .relaxed)
    }

    /// Structural problems in any shard, and disagreements between the shards and the budget
    /// (for tests; call it when no other thread uses the cache). Empty when all is well.
    func invariantViolations() -> [String] {
        var problems: [String] = []
        var entries = 0
        var cost = 0
        for (number, shard) in shards.enumerated() {
            let (shardProblems, shardCount, shardCost) = shard.check()
            problems += shardProblems.map { "shard \(number): \($0)" }
            entries += shardCount
            cost += shardCost
        }
        if entries != count { problems.append("shards hold \(entries) entries, budget says \(count)") }
        if cost != totalCost { problems.append("shards hold cost \(cost), budget says \(totalCost)") }
        if let countLimit, count > countLimit { problems.append("count \(count) > countLimit \(countLimit)") }
        if let costLimit, totalCost > costLimit { problems.append("totalCost \(totalCost) > costLimit \(costLimit)") }
        return problems
    }
}
