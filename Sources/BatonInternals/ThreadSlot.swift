/// A per-thread slot (a pthread thread-specific key): each thread sees its own value, and a slot
/// made for objects releases a thread's object when the thread exits.
///
/// One slot per purpose, made once (a `static let`) and never destroyed: a process has a few
/// hundred keys at most.
///
/// Thread safety: the key is immutable; each thread reads and writes only its own value.
@usableFromInline
package struct ThreadSlot: @unchecked Sendable {  // the key is immutable after init
    @usableFromInline package let key: pthread_key_t

    private init(releasingObjects: Bool) {
        var key = pthread_key_t()
        let result: Int32
        if releasingObjects {
            #if canImport(Darwin)
            result = pthread_key_create(&key) { Unmanaged<AnyObject>.fromOpaque($0).release() }
            #else
            result = pthread_key_create(&key) { pointer in
                if let pointer { Unmanaged<AnyObject>.fromOpaque(pointer).release() }
            }
            #endif
        } else {
            result = pthread_key_create(&key, nil)
        }
        precondition(result == 0, "ThreadSlot: pthread_key_create failed with error \(result)")
        self.key = key
    }

    /// A slot for a word per thread (a number, a pointer that the slot does not own).
    package static func words() -> ThreadSlot { ThreadSlot(releasingObjects: false) }

    /// A slot for an object per thread, which it keeps until the thread exits.
    package static func objects() -> ThreadSlot { ThreadSlot(releasingObjects: true) }

    /// The calling thread's word, `nil` until it sets one.
    @inlinable package var word: UnsafeMutableRawPointer? { pthread_getspecific(key) }

    /// Sets the calling thread's word.
    @inlinable package func setWord(_ word: UnsafeRawPointer?) { pthread_setspecific(key, word) }

    /// The calling thread's object, unretained (the slot keeps it alive while the thread runs),
    /// `nil` until it sets one.
    @inlinable package func object<Object: AnyObject>(_ type: Object.Type) -> Unmanaged<Object>? {
        pthread_getspecific(key).map { Unmanaged<Object>.fromOpaque($0) }
    }

    /// Gives the calling thread `object`, which the slot keeps until the thread exits; a
    /// thread's object is set once (slots made with ``objects()`` only).
    package func setObject(_ object: AnyObject) {
        precondition(pthread_getspecific(key) == nil, "ThreadSlot: a thread's object is set once")
        pthread_setspecific(key, Unmanaged.passRetained(object).toOpaque())
    }
}
