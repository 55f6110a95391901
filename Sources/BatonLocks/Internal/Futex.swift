#if !canImport(Darwin)
import Atomics
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
