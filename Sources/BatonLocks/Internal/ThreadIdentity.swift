import BatonInternals
import CBatonPlatform

/// A non-zero number that identifies the calling thread while it lives.
@inlinable
func currentThreadID() -> UInt {
    #if canImport(Darwin)
    UInt(bitPattern: pthread_self())
    #elseif os(Linux) && (arch(x86_64) || arch(arm64))
    UInt(baton_thread_pointer())
    #else
    UInt(pthread_self())
    #endif
}
