import BatonLocks

/// The computations in flight for the `async` `MemoryCache.value(forKey:cost:orInsert:)`: for each
/// key being computed, the callers waiting for its result.
///
/// The caller that finds no flight for its key starts one and computes; callers that find one
/// wait on a continuation. The leader stores the value in the cache before it ends the flight,
/// so a caller that comes later either joins the flight or finds the value.
final class SingleFlight<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    typealias Waiter = CheckedContinuation<Value, any Error>

    /// Guarded by its own lock: the waiters of each key being computed.
    let flights = Protected<[Key: [Waiter]]>([:])

    init() {}

    /// Starts a flight for `key` if none is in the air. Returns whether the caller leads it.
    func lead(_ key: Key) -> Bool {
        flights.write { flights in
            guard flights[key] == nil else { return false }
            flights[key] = []
            return true
        }
    }

    /// Waits for the flight for `key` to end and returns its result. Throws ``FlightEnded``
    /// if it ended before the caller could join, so the caller looks again.
    func join(_ key: Key) async throws -> Value {
        try await withCheckedThrowingContinuation { (waiter: Waiter) in
            let joined = flights.write { flights in
                guard flights[key] != nil else { return false }
                flights[key]!.append(waiter)
                return true
            }
            if !joined { waiter.resume(throwing: FlightEnded()) }
        }
    }

    /// Ends the flight for `key` and hands `result` to every waiter, after the lock is
    /// released.
    func land(_ key: Key, with result: Result<Value, any Error>) {
        let waiters = flights.write { $0.removeValue(forKey: key) } ?? []
        for waiter in waiters { waiter.resume(with: result) }
    }

    /// Thrown to a caller that tried to join a flight that had just ended.
    struct FlightEnded: Error {}
}
