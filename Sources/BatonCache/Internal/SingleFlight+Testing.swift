import BatonLocks

extension SingleFlight {
    /// How many callers wait for `key` (for tests).
    func waiterCount(forKey key: Key) -> Int {
        flights.read { $0[key]?.count ?? 0 }
    }
}
