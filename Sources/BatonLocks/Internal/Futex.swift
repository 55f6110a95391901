#if !canImport(Darwin)
import Atomics
import BatonInternals
import CBatonPlatform

/// Parks the calling thread while the word still holds `expected`. Spurious returns are fine:
/// every caller re-reads its state word in a loop.
func futexWait(_ word: UnsafeMutablePointer<UInt32.AtomicRepresentation>, _ expected: UInt32) {
    #if BATON_MODEL_CHECK
    if ModelCheckSeam.active?.futexWait(UnsafeMutableRawPointer(word), expected) == true { return }
    #endif
    word.withMemoryRebound(to: UInt32.self, capacity: 1) { address in
        _ = baton_futex_wait(address, expected)
    }
}

/// Parks the calling thread while the word still holds `expected`, for at most `timeout`, which
/// must be positive (a caller whose deadline has passed does not wait). Returns `true` if the
/// time ran out, `false` on any other return (woken, the word had changed, a signal, a spurious
/// wake-up): the caller re-reads its word and works out the time left from its own deadline,
/// never by reusing `timeout`.
///
/// The kernel reports a timeout only for a thread that no wake picked, so a caller that gets
/// `true` was handed no wake to pass on; one that gets `false` may have been, and must try its
/// word before it gives up.
func futexWait(
    _ word: UnsafeMutablePointer<UInt32.AtomicRepresentation>, _ expected: UInt32, timeout: Duration
) -> Bool {
    #if BATON_MODEL_CHECK
    if let timedOut = ModelCheckSeam.active?.timedFutexWait(UnsafeMutableRawPointer(word), expected) {
        return timedOut
    }
    #endif
    return word.withMemoryRebound(to: UInt32.self, capacity: 1) { address in
        baton_futex_wait_timeout(address, expected, timeout.wholeNanoseconds) == 1
    }
}

/// Wakes up to `count` threads parked on the word; returns how many were woken.
@discardableResult
func futexWake(_ word: UnsafeMutablePointer<UInt32.AtomicRepresentation>, _ count: Int32) -> Int32 {
    #if BATON_MODEL_CHECK
    if let woken = ModelCheckSeam.active?.futexWake(UnsafeMutableRawPointer(word), count) { return woken }
    #endif
    return word.withMemoryRebound(to: UInt32.self, capacity: 1) { address in
        Int32(baton_futex_wake(address, count))
    }
}
#endif
