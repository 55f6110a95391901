/// One entry that left the cache, and why.
@usableFromInline
struct EvictedEntry<Key, Value> {
    @usableFromInline let key: Key
    @usableFromInline let value: Value
    @usableFromInline let reason: EvictionReason

    @inlinable
    init(key: Key, value: Value, reason: EvictionReason) {
        self.key = key
        self.value = value
        self.reason = reason
    }
}

/// The entries one operation removed, collected while a shard's lock is held and handed to
/// ``MemoryCache`` after it is released: the handlers run there, and the values are released
/// there, so neither a handler nor a large value's `deinit` ever runs inside the lock.
///
/// The first entry is stored inline, so the common case — a write that evicts one entry —
/// allocates nothing.
@usableFromInline
struct EvictionBatch<Key, Value> {
    @usableFromInline var first: EvictedEntry<Key, Value>?
    @usableFromInline var rest: [EvictedEntry<Key, Value>] = []

    @inlinable
    init() {}

    @inlinable
    var isEmpty: Bool { first == nil }

    @inlinable
    mutating func append(_ key: Key, _ value: Value, _ reason: EvictionReason) {
        let entry = EvictedEntry(key: key, value: value, reason: reason)
        if first == nil {
            first = entry
        } else {
            rest.append(entry)
        }
    }

    @inlinable
    func forEach(_ body: (EvictedEntry<Key, Value>) -> Void) {
        guard let first else { return }
        body(first)
        for entry in rest { body(entry) }
    }
}
