/// Why an entry left a ``MemoryCache``, as passed to its eviction handlers.
///
/// Thread safety: a plain value; `Sendable`.
public enum EvictionReason: Sendable, Hashable, CustomStringConvertible {
    /// Evicted by the policy to stay within `countLimit` (or by `trim(toCount:)`).
    case count
    /// Evicted by the policy to stay within `costLimit` (or by `trim(toCost:)`), or never stored
    /// because its cost alone exceeds `costLimit`.
    case cost
    /// Its `timeToLive` or `timeToIdle` ran out.
    case expired
    /// Removed by `removeValue(forKey:)` or `removeAll()`.
    case removed
    /// Replaced by a new value written for the same key.
    case replaced

    public var description: String {
        switch self {
        case .count: "count"
        case .cost: "cost"
        case .expired: "expired"
        case .removed: "removed"
        case .replaced: "replaced"
        }
    }
}
