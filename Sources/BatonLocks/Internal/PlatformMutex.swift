import CBatonPlatform

#if canImport(Darwin)
import Darwin
#else
import Atomics
#endif

/// The raw, non-recursive mutex under `Lock` and `RecursiveLock`.
///
/// Darwin: a heap-allocated `os_unfair_lock`. Linux: a three-state futex word (0 unlocked,
/// 1 locked, 2 locked with waiters) with a bounded spin before parking. Unlike
/// `Synchronization.Mutex` on Linux it uses the plain (not priority-inheritance) futex and does
/// not hand the lock to the woken waiter, so a running thread can take it at once: that keeps
/// throughput when there are more threads than cores. The storage is allocated once and never
/// moves, so the lock word's address stays valid for the futex.
@usableFromInline
struct PlatformMutex {
    #if canImport(Darwin)
    @usableFromInline let storage: UnsafeMutablePointer<os_unfair_lock>

    init() {
        storage = .allocate(capacity: 1)
        storage.initialize(to: os_unfair_lock())
    }

    func deallocate() {
        storage.deinitialize(count: 1)
        storage.deallocate()
    }

    @inlinable func lock() { os_unfair_lock_lock(storage) }
    @inlinable func tryLock() -> Bool { os_unfair_lock_trylock(storage) }
    @inlinable func unlock() { os_unfair_lock_unlock(storage) }
    #else
    @usableFromInline let storage: UnsafeMutablePointer<UInt32.AtomicRepresentation>

    @usableFromInline static let unlocked: UInt32 = 0
    @usableFromInline static let locked: UInt32 = 1
    @usableFromInline static let contended: UInt32 = 2

    init() {
        storage = .allocate(capacity: 1)
        storage.initialize(to: .init(Self.unlocked))
    }

    func deallocate() {
        storage.deinitialize(count: 1)
        storage.deallocate()
    }

    @inlinable var word: LockWord { LockWord(at: storage) }

    @inlinable func lock() {
        if !word.weakCompareExchange(
            expected: Self.unlocked, desired: Self.locked,
            successOrdering: .acquiring, failureOrdering: .relaxed
        ).exchanged {
            lockContended()
        }
    }

    @inlinable func tryLock() -> Bool {
        word.compareExchange(
            expected: Self.unlocked, desired: Self.locked,
            successOrdering: .acquiring, failureOrdering: .relaxed
        ).exchanged
    }

    @inlinable func unlock() {
        if word.exchange(Self.unlocked, ordering: .releasing) == Self.contended {
            wakeOne()
        }
    }

    @usableFromInline func lockContended() {
        var state = spin()
        if state == Self.unlocked {
            let (exchanged, original) = word.compareExchange(
                expected: Self.unlocked, desired: Self.locked,
                successOrdering: .acquiring, failureOrdering: .relaxed)
            if exchanged { return }
            state = original
        }
        while true {
            // Marking the word contended before parking makes the holder's unlock wake someone.
            if state != Self.contended,
                word.exchange(Self.contended, ordering: .acquiring) == Self.unlocked
            {
                return
            }
            futexWait(storage, Self.contended)
            state = spin()
        }
    }

    /// Spins while another thread holds the lock without waiters: a short critical section is
    /// usually over before a futex round trip (about 2 µs) would be.
    func spin() -> UInt32 {
        var remaining = spinLimit
        while true {
            let state = word.load(ordering: .relaxed)
            if state != Self.locked || remaining == 0 { return state }
            baton_cpu_relax()
            remaining -= 1
        }
    }

    @usableFromInline func wakeOne() {
        futexWake(storage, 1)
    }
    #endif
}

/// How many times a contended acquirer polls the lock word before it parks: about 1 µs of
/// `pause`, which covers a typical critical section without burning a time slice.
#if BATON_MODEL_CHECK && !canImport(Darwin)
/// Under the model checker, two polls: each is a step of the schedule, and two cover both ways
/// out of the loop as well as a hundred.
var spinLimit: Int { ModelCheckSeam.runsCurrentThread ? 2 : 100 }
#else
let spinLimit = 100
#endif
