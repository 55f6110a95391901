import BatonCache
import Foundation

/// A `MemoryCache<URL, Data>` is a ``Fetcher``'s cache as it is: bodies are stored with their
/// size in bytes as the cost, so `costLimit` bounds the cache's memory.
///
/// ```swift
/// let fetcher = Fetcher(cache: MemoryCache<URL, Data>(costLimit: 32 << 20, timeToLive: .seconds(300)))
/// ```
extension MemoryCache: FetchCache where Key == URL, Value == Data {
    /// Stores `value` for `key` with the cache's own lifetime; `cost` is the body's size.
    public func setValue(_ value: Data, forKey key: URL, cost: Int) {
        setValue(value, forKey: key, cost: cost, timeToLive: nil)
    }
}
