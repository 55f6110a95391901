#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A per-thread slot holding one strong object reference, released when its thread exits.
final class ThreadLocalReference: @unchecked Sendable {  // the pthread key is immutable after init
    private let key: pthread_key_t

    init() {
        var key = pthread_key_t()
        #if canImport(Darwin)
        let result = pthread_key_create(&key) { Unmanaged<AnyObject>.fromOpaque($0).release() }
        #else
        let result = pthread_key_create(&key) { pointer in
            if let pointer { Unmanaged<AnyObject>.fromOpaque(pointer).release() }
        }
        #endif
        precondition(result == 0, "pthread_key_create failed with error \(result)")
        self.key = key
    }

    /// The calling thread's object, if it has one.
    var value: AnyObject? {
        pthread_getspecific(key).map { Unmanaged<AnyObject>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Gives the calling thread `object`, which it keeps until it exits.
    func set(_ object: AnyObject) {
        precondition(pthread_getspecific(key) == nil, "a thread's slot is set once")
        pthread_setspecific(key, Unmanaged.passRetained(object).toOpaque())
    }
}
