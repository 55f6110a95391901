import BatonCache
import BatonLocks
import BatonTesting

/// A get-or-insert cache's sequential specification: the first call for a key may return any
/// value, and every later call for that key returns the same one.
struct GetOrInsertSpec: SequentialModel, Sendable {
    enum Operation: Sendable, Hashable { case value(forKey: String) }

    var initialState: [String: Int] { [:] }

    func step(_ stored: [String: Int], _ operation: Operation, _ output: Int) -> [String: Int]? {
        switch operation {
        case .value(let key):
            guard let value = stored[key] else {
                var stored = stored
                stored[key] = output
                return stored
            }
            return value == output ? stored : nil
        }
    }
}

/// A memory cache whose values are made by a counter, so that two computations for one key
/// give different values: only the first stored may ever be returned.
final class CountingCache: Sendable {
    let cache = MemoryCache<String, Int>()
    private let made = Protected(0)

    func make() -> Int {
        made.write { made in
            made += 1
            return made
        }
    }

    func value(forKey key: String) -> Int {
        cache.value(forKey: key) { make() }
    }

    func value(forKey key: String) async throws -> Int {
        try await cache.value(forKey: key) {
            let value = self.make()
            await Task.yield()  // stands for the network
            return value
        }
    }
}

extension Zoo {
    static var cacheOperations: CheckOperations<GetOrInsertSpec.Operation> {
        [.value(forKey: "ada"), .value(forKey: "grace")]
    }

    static var memoryCache: Exhibit {
        Exhibit(type: "MemoryCache, get-or-insert", bug: nil) { budget in
            try LinearizabilityCheck(model: GetOrInsertSpec(), operations: cacheOperations, make: { CountingCache() }) {
                cache, operation in
                switch operation {
                case .value(let key): cache.value(forKey: key)
                }
            }.run(budget: budget)
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static var singleFlightMemoryCache: Exhibit {
        Exhibit(type: "MemoryCache, async single flight", bug: nil) { budget in
            try await AsyncLinearizabilityCheck(
                model: GetOrInsertSpec(), operations: cacheOperations, make: { CountingCache() }
            ) { cache, operation in
                switch operation {
                // The computation never throws, so neither does the flight.
                case .value(let key): try! await cache.value(forKey: key)
                }
            }.run(budget: budget)
        }
    }
}
