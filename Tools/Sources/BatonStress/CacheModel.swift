import BatonTesting

/// The sequential specification of one key of a cache that may drop entries at any time
/// (``MemoryCache`` under its count, cost, time-to-live and time-to-idle limits), to check one
/// key's sub-history with ``LinearizabilityChecker/check(_:partitionedBy:)``.
///
/// What it allows is exactly what `MemoryCache` promises, no more:
/// - a lookup (`value(forKey:)`, or the quiet `peek(_:)`) returns the last value written, or
///   `nil` if the entry has gone (evicted, expired, removed, or trimmed by a lowered limit);
/// - `contains(_:)` says true only while the key holds a value; it may say false at any time,
///   like a miss;
/// - an entry that has gone stays gone until the next write: a lookup never brings back a value
///   after a lookup (or `contains`) saw the key empty;
/// - a write, with the cache's lifetime or one of its own, replaces whatever was there, and its
///   entry may itself be evicted at any moment, even before anyone reads it (another write
///   needed the room, a limit was lowered, or it expired);
/// - `removeValue` returns what a lookup would, then the key is empty;
/// - `value(forKey:orInsert:)` returns the live value if there is one, otherwise stores and
///   returns its own.
///
/// Since an entry may go at any moment, the model cannot tell an early expiry from an eviction:
/// when entries expire, and that an expired one is never returned, are checked against the
/// clock by the stress run itself.
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
        /// `peek(_:)`, the quiet lookup; returns the value or `nil`, as ``get(_:)`` does.
        case peek(Key)
        /// `contains(_:)`; record any non-`nil` output (such as `0`) for true and `nil` for
        /// false.
        case contains(Key)
        /// `setValue(_:forKey:)`; its output is ignored (record `nil`).
        case set(Key, Value)
        /// `setValue(_:forKey:timeToLive:)`, a write with a lifetime of its own; its output is
        /// ignored (record `nil`). The model treats it as ``set(_:_:)``: the lifetime only
        /// changes when the entry may go, and it may go at any moment anyway.
        case setWithLifetime(Key, Value)
        /// `removeValue(forKey:)`; returns the value removed or `nil`.
        case remove(Key)
        /// `value(forKey:orInsert:)` whose closure makes `Value`; returns the value now cached.
        case getOrInsert(Key, Value)

        /// The key the operation acts on: the partition key.
        public var key: Key {
            switch self {
            case .get(let key), .peek(let key), .contains(let key), .set(let key, _),
                .setWithLifetime(let key, _), .remove(let key), .getOrInsert(let key, _):
                key
            }
        }

        public var description: String {
            switch self {
            case .get(let key): "get(\(key))"
            case .peek(let key): "peek(\(key))"
            case .contains(let key): "contains(\(key))"
            case .set(let key, let value): "set(\(key), \(value))"
            case .setWithLifetime(let key, let value): "setWithLifetime(\(key), \(value))"
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
        case .set(_, let value), .setWithLifetime(_, let value):
            return .some(value)
        case .get, .peek:
            // A miss is always possible: the entry may have been evicted or expired just now.
            guard let output else { return .some(nil) }
            return output == state ? .some(state) : nil
        case .contains:
            // False is always possible, as a miss is; true only while the key holds a value.
            guard output != nil else { return .some(nil) }
            return state != nil ? .some(state) : nil
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
        case .set, .setWithLifetime: "\(input)"
        case .contains: "\(input) → \(output != nil)"
        default: "\(input) → \(output.map { "\($0)" } ?? "nil")"
        }
    }

    public func describe(_ state: Value?) -> String {
        state.map { "holds \($0)" } ?? "empty"
    }
}
