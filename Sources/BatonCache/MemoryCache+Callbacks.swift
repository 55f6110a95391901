import Dispatch

/// The completion-handler API, for code written against the classic callback-style caches
/// (`objectForKey:block:`): each call does its work at once and calls back on `queue`.
extension MemoryCache {
    /// Looks up `key` and passes the value (or `nil`) to `completion` on `queue`.
    ///
    /// - Parameters:
    ///   - key: The key to look up.
    ///   - queue: Where `completion` runs; a global queue by default.
    ///   - completion: Receives the value, or `nil` on a miss.
    /// - Complexity: O(1) on average.
    public func value(
        forKey key: Key, on queue: DispatchQueue = .global(),
        completion: @escaping @Sendable (Value?) -> Void
    ) {
        let found = value(forKey: key)
        queue.async { completion(found) }
    }

    /// Stores `value` for `key` (with its own `timeToLive`, if given, as in
    /// ``setValue(_:forKey:cost:timeToLive:)``), then calls `completion` on `queue`.
    ///
    /// - Complexity: O(1) on average, plus the evictions it causes.
    public func setValue(
        _ value: Value, forKey key: Key, cost: Int = 1, timeToLive: Duration? = nil,
        on queue: DispatchQueue = .global(), completion: @escaping @Sendable () -> Void
    ) {
        setValue(value, forKey: key, cost: cost, timeToLive: timeToLive)
        queue.async { completion() }
    }

    /// Removes the value for `key`, then passes it (or `nil`) to `completion` on `queue`.
    ///
    /// - Complexity: O(1) on average.
    public func removeValue(
        forKey key: Key, on queue: DispatchQueue = .global(),
        completion: @escaping @Sendable (Value?) -> Void
    ) {
        let removed = removeValue(forKey: key)
        queue.async { completion(removed) }
    }

    /// Returns the value for `key` through `completion` on `queue`, computing it with `make`
    /// on a miss: the single-flight get-or-insert of
    /// `async` `value(forKey:cost:orInsert:)` for callback-style code.
    ///
    /// - Parameters:
    ///   - key: The key to look up.
    ///   - cost: The cost of the computed value, if it is stored.
    ///   - timeToLive: The computed value's own lifetime; `nil` for the cache's.
    ///   - make: Computes the value on a miss, in a new task.
    ///   - queue: Where `completion` runs; a global queue by default.
    ///   - completion: Receives the value, or the error `make` threw.
    public func value(
        forKey key: Key, cost: Int = 1, timeToLive: Duration? = nil,
        orInsert make: @escaping @Sendable () async throws -> Value, on queue: DispatchQueue = .global(),
        completion: @escaping @Sendable (Result<Value, any Error>) -> Void
    ) {
        if let cached = value(forKey: key) {
            queue.async { completion(.success(cached)) }
            return
        }
        Task {
            let result: Result<Value, any Error>
            do {
                result = .success(
                    try await self.value(forKey: key, cost: cost, timeToLive: timeToLive, orInsert: make))
            } catch {
                result = .failure(error)
            }
            queue.async { completion(result) }
        }
    }
}
