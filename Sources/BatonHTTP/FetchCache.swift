import Foundation

/// A cache of response bodies by URL that ``Fetcher`` can use: successful GET bodies are stored
/// in it, and a GET finds its body there before any request is made.
///
/// Its two requirements are spelled like `MemoryCache`'s own methods, so a
/// `MemoryCache<URL, Data>` conforms with an empty extension.
///
/// Thread safety: conforming types must allow both methods from any thread, concurrently.
public protocol FetchCache: Sendable {
    /// The cached body for `key`, or `nil`.
    func value(forKey key: URL) -> Data?
    /// Stores `value` for `key`; `cost` is the body's size in bytes.
    func setValue(_ value: Data, forKey key: URL, cost: Int)
}
