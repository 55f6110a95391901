import BatonLocks

extension CacheShard {
    /// Structural problems in the shard (for tests), with its count and total cost.
    func check() -> (problems: [String], count: Int, cost: Int) {
        lock.withReadLock { (state.invariantViolations(), state.count, state.totalCost) }
    }
}
