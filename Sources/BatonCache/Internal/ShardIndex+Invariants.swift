extension ShardIndex {
    /// The slot of the entry for `key`, if any (for checks).
    func slot(of key: Key) -> Int32? {
        let bucket = find(key, hash: key.hashValue)
        return bucket < 0 ? nil : slot(at: bucket)
    }

    /// Problems with the table, for tests: every entry reachable from its home without an
    /// empty bucket between, its stored hash its key's, the reverse map and the count agreeing.
    func invariantViolations() -> [String] {
        var problems: [String] = []
        var full = 0
        for bucket in 0...mask {
            let slot = slot(at: bucket)
            guard slot != noSlot else { continue }
            full += 1
            let key = keyAddress(bucket).pointee
            if hash(at: bucket) != key.hashValue { problems.append("bucket \(bucket) holds a stale hash") }
            var probe = home(hash(at: bucket))
            while probe != bucket {
                if self.slot(at: probe) == noSlot {
                    problems.append("bucket \(bucket) is cut off from its home by empty bucket \(probe)")
                    break
                }
                probe = (probe + 1) & mask
            }
            if Int(slot) >= slotCapacity || bucketOfSlot[Int(slot)] != Int32(bucket) {
                problems.append("slot \(slot) does not map back to bucket \(bucket)")
            }
        }
        if full != count { problems.append("\(full) buckets full, counted \(count)") }
        if full * 4 > (mask + 1) * 3 { problems.append("\(full) entries in \(mask + 1) buckets") }
        let mapped = (0..<slotCapacity).filter { bucketOfSlot[$0] != noSlot }.count
        if mapped != count { problems.append("\(mapped) slots map to buckets, counted \(count)") }
        return problems
    }
}
