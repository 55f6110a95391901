import Atomics
import BatonLocks

/// The handlers registered with ``MemoryCache/onEviction(_:)``.
///
/// An atomic flag lets every eviction skip the list's lock until the first handler is added.
@usableFromInline
final class EvictionHandlers<Key, Value>: Sendable {
    @usableFromInline typealias Handler = @Sendable (Key, Value, EvictionReason) -> Void

    /// Guarded by its own lock.
    let handlers = Protected<[Handler]>([])
    @usableFromInline let isActive = ManagedAtomic<Bool>(false)

    init() {}

    func append(_ handler: @escaping Handler) {
        handlers.write { $0.append(handler) }
        isActive.store(true, ordering: .releasing)
    }

    /// The handlers, read under the lock and called by the caller after it is released.
    @usableFromInline
    var current: [Handler] { handlers.value }
}
