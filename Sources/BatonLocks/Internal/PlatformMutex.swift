import BatonInternals
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

    /// Acquires the lock unless `timeout` passes first; returns whether it did. A zero or
    /// negative `timeout` makes one try.
    ///
    /// `os_unfair_lock` has no timed acquire, and its unlock wakes only the threads parked in
    /// `os_unfair_lock_lock`: a thread that gave up cannot leave that queue, and nothing tells
    /// anyone else of a release. Waking timed waiters from `unlock()` would cost every unlock a
    /// full fence and a second word, for a rare call. So this tries the lock, spins as `lock()`
    /// does on Linux (about a microsecond), then sleeps between tries, each sleep twice the last
    /// from 4 µs up to 1 ms and never past the deadline, with a last try when the time is up. It
    /// takes a lock that was freed within about a millisecond (when no other thread takes it
    /// first), gives no priority to the holder while it waits (`os_unfair_lock_lock` does), and
    /// may lose the lock to threads that take it in between.
    func lock(timeout: Duration) -> Bool {
        if os_unfair_lock_trylock(storage) { return true }
        guard timeout > .zero else { return false }
        let start = ContinuousClock.now
        for _ in 0..<spinLimit {
            baton_cpu_relax()
            if os_unfair_lock_trylock(storage) { return true }
        }
        var pause: Int64 = 4_000  // nanoseconds
        while true {
            let remaining = (timeout - start.duration(to: .now)).wholeNanoseconds
            if remaining <= 0 { return false }
            var interval = timespec(tv_sec: 0, tv_nsec: Int(min(pause, remaining, 1_000_000)))
            _ = nanosleep(&interval, nil)
            if os_unfair_lock_trylock(storage) { return true }
            pause = min(pause * 2, 1_000_000)
        }
    }
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

    /// Acquires the lock unless `timeout` passes first; returns whether it did. A zero or
    /// negative `timeout` makes one try.
    @inlinable func lock(timeout: Duration) -> Bool {
        if tryLock() { return true }
        guard timeout > .zero else { return false }
        return lockContended(timeout: timeout)
    }

    /// `lockContended()` with a deadline: the same protocol, parked on the word with a timeout.
    ///
    /// After every return from the futex (woken, timed out, a signal, a spurious wake-up) the
    /// thread tries the word before it looks at the time. A thread that an unlock woke may be
    /// the only one that unlock will wake; if it then gave up without trying, the wake would be
    /// lost and another waiter left parked on a free lock. Its try either takes the lock or
    /// finds it held and marks it contended again, so the holder's unlock wakes the next waiter.
    ///
    /// A thread that gives up leaves the word as it is, most often contended ("2") after its own
    /// mark: other waiters may be parked, and it cannot tell, so the next unlock wakes one (or,
    /// if none is parked, makes one futex call for nothing, as after any contended acquire). It
    /// never lowers the word, which would lose that wake; and it holds nothing: it returns
    /// `false` only after a try that did not take the lock.
    @usableFromInline func lockContended(timeout: Duration) -> Bool {
        let start = ContinuousClock.now
        var state = spin()
        if state == Self.unlocked {
            let (exchanged, original) = word.compareExchange(
                expected: Self.unlocked, desired: Self.locked,
                successOrdering: .acquiring, failureOrdering: .relaxed)
            if exchanged { return true }
            state = original
        }
        var timedOut = false
        while true {
            let taken = state != Self.contended && word.exchange(Self.contended, ordering: .acquiring) == Self.unlocked
            if taken { return true }
            if timedOut { return false }
            // The time left, from the start: a wait that returned early is not given its whole
            // timeout again.
            let remaining = timeout - start.duration(to: .now)
            if remaining <= .zero { return false }
            timedOut = futexWait(storage, Self.contended, timeout: remaining)
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
