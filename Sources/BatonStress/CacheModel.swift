/// The sequential specification of one key of a cache that may drop entries at any time
/// (``MemoryCache`` under its count, cost, time-to-live and time-to-idle limits), to check one
/// key's sub-history with ``LinearizabilityChecker/check(_:partitionedBy:)``.
///
/// What it allows is exactly what `MemoryCache` promises, no more:
/// - a lookup returns the last value written, or `nil` if the entry has gone (evicted, expired
///   or removed);
/// - an entry that has gone stays gone until the next write: a lookup never brings back a value
///   after a lookup saw the key empty;
/// - a write replaces whatever was there, and its entry may itself be evicted at any moment,
///   even before anyone reads it (another write needed the room, or it expired);
/// - `removeValue` returns what a lookup would, then the key is empty;
/// - `value(forKey:orInsert:)` returns the live value if there is one, otherwise stores and
///   returns its own.
///
/// The state is the value the key holds, or `nil` once it has gone. Write a different value
/// each time, so that every output names the write it came from.
///
/// Thread safety: a plain value; `Sendable`.
public struct CacheModel<Key: Hashable & Sendable, Value: Hashable & Sendable>: SequentialModel, Sendable {
    /// A cache operation on one key.
    public enum Operation: Sendable, Hashable, CustomStringConvertible {
        /// `value(forKey:)`; returns the value or `nil`.
        case get(Key)
        /// `setValue(_:forKey:)`; its output is ignored (record `nil`).
        case set(Key, Value)
        /// `removeValue(forKey:)`; returns the value removed or `nil`.
        case remove(Key)
        /// `value(forKey:orInsert:)` whose closure makes `Value`; returns the value now cached.
        case getOrInsert(Key, Value)

        /// The key the operation acts on: the partition key.
        public var key: Key {
            switch self {
            case .get(let key), .set(let key, _), .remove(let key), .getOrInsert(let key, _): key
            }
        }

        public var description: String {
            switch self {
            case .get(let key): "get(\(key))"
            case .set(let key, let value): "set(\(key), \(value))"
            case .remove(let key): "remove(\(key))"
            case .getOrInsert(let key, let value): "getOrInsert(\(key), \(value))"
            }
        }
    }

    /// Creates the model; every key starts empty.
    public init() {}

    public var initialState: Value? { nil }

    public func step(_ state: Value?, _ input: Operation, _ output: Value?) -> Value?? {
        switch input {
        case .set(_, let value):
            return .some(value)
        case .get:
            // A miss is always possible: the entry may have been evicted or expired just now.
            guard let output else { return .some(nil) }
            return output == state ? .some(state) : nil
        case .remove:
            guard let output else { return .some(nil) }
            return output == state ? .some(nil) : nil
        case .getOrInsert(_, let made):
            // Returning its own value means it found the key empty (perhaps just evicted) and
            // stored it; anything else must be the live value.
            if output == made { return .some(made) }
            return output != nil && output == state ? .some(state) : nil
        }
    }

    public func describe(_ input: Operation, _ output: Value?) -> String {
        switch input {
        case .set: "\(input)"
        default: "\(input) → \(output.map { "\($0)" } ?? "nil")"
        }
    }

    public func describe(_ state: Value?) -> String {
        state.map { "holds \($0)" } ?? "empty"
    }
}
