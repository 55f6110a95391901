extension MemoryCache {
    /// Returns the value for `key`, computing and storing it with `make` if there is none.
    ///
    /// Counts one lookup (a hit or a miss). `make` runs without any lock held, so two threads
    /// that miss the same key at once may both run it; the first value stored wins and both
    /// callers get it. A caller that gets a value stored while its `make` ran uses the entry as
    /// a hit does (its recency for the eviction policy, its read time under an idle limit),
    /// though its lookup is counted as the miss it was. For one computation per key however
    /// many callers wait, use the `async` variant, which is single-flight.
    ///
    /// ```swift
    /// let user = users.value(forKey: id) { try database.loadUser(id) }
    /// ```
    ///
    /// - Parameters:
    ///   - key: The key to look up.
    ///   - cost: The cost of the computed value, if it is stored.
    ///   - timeToLive: The computed value's own lifetime, as in
    ///     ``setValue(_:forKey:cost:timeToLive:)``; `nil` for the cache's.
    ///   - make: Computes the value on a miss.
    /// - Returns: The cached value, or the one `make` computed.
    /// - Throws: What `make` throws; nothing is stored then.
    /// - Complexity: O(1) on average, plus `make` on a miss.
    @inlinable
    public func value(
        forKey key: Key, cost: Int = 1, timeToLive: Duration? = nil, orInsert make: () throws -> Value
    ) rethrows -> Value {
        if let cached = value(forKey: key) { return cached }
        return store(try make(), forKey: key, cost: cost, timeToLive: timeToLive, ifAbsent: true)
    }

    /// Returns the value for `key`, computing and storing it with `make` if there is none;
    /// concurrent callers for the same missing key share one computation (single flight).
    ///
    /// The first caller to miss runs `make`; every caller that misses the same key while it
    /// runs waits for its result instead of computing again. On success the value is stored
    /// and every waiter gets it — unless a value was stored for the key while `make` ran (by
    /// ``setValue(_:forKey:cost:timeToLive:)``, say): as in the synchronous form, that first
    /// value wins and is what every waiter gets. If `make` throws, nothing is cached, every
    /// waiter gets the error, and the next caller tries again.
    ///
    /// ```swift
    /// // A hundred views asking for the same avatar start one download.
    /// let avatar = try await avatars.value(forKey: userID) { try await api.avatar(userID) }
    /// ```
    ///
    /// - Parameters:
    ///   - key: The key to look up.
    ///   - cost: The cost of the computed value, if it is stored.
    ///   - timeToLive: The computed value's own lifetime, as in
    ///     ``setValue(_:forKey:cost:timeToLive:)``; `nil` for the cache's.
    ///   - make: Computes the value on a miss; runs in the task of the caller that started
    ///     the flight, with no lock held.
    /// - Returns: The cached value, or the one the flight computed.
    /// - Throws: What `make` threw in the flight this caller waited for.
    /// - Complexity: O(1) on average, plus `make` on a miss.
    /// - Warning: Waiters are not cancelled with their tasks: a waiting caller returns when the
    ///   computation it waits for ends. The computation runs in the task that started it and
    ///   sees that task's cancellation.
    public func value(
        forKey key: Key, cost: Int = 1, timeToLive: Duration? = nil,
        orInsert make: @Sendable () async throws -> Value
    ) async throws -> Value {
        if let cached = value(forKey: key) { return cached }
        let hash = key.hashValue
        while true {
            if flights.lead(key) {
                // A flight that ended between our miss and our lead may have stored the value.
                if case .hit(let cached) = lookup(key, hash: hash, now: currentTime(), in: shards[hash & shardMask]) {
                    flights.land(key, with: .success(cached))
                    return cached
                }
                do {
                    let made = try await make()
                    let stored = store(made, forKey: key, cost: cost, timeToLive: timeToLive, ifAbsent: true)
                    flights.land(key, with: .success(stored))
                    return stored
                } catch {
                    flights.land(key, with: .failure(error))
                    throw error
                }
            }
            do {
                return try await flights.join(key)
            } catch is SingleFlight<Key, Value>.FlightEnded {
                // The flight ended before we could join it: its value, if any, is stored now.
                if case .hit(let cached) = lookup(key, hash: hash, now: currentTime(), in: shards[hash & shardMask]) {
                    return cached
                }
            }
        }
    }
}
