import CBatonPlatform

#if canImport(Darwin)
import Darwin
#else
import Atomics
#endif

/// The raw reader-writer lock under `ReadWriteLock`. Writer-preferring on every platform: once
/// a writer waits, new readers wait behind it, so a steady stream of readers cannot starve it.
///
/// Darwin: a heap-allocated `pthread_rwlock_t` (Darwin's implementation already prefers
/// writers). Linux: glibc's default rwlock prefers readers, so this is a futex lock of its own.
///
/// Package-visible as a type only, so that a structure of this package can keep a lock's handle
/// beside its own fields (see `ReadWriteLock.withReadLock(through:of:file:line:_:)`); its
/// operations stay internal to BatonLocks.
@usableFromInline
package struct PlatformRWLock {
    #if canImport(Darwin)
    @usableFromInline let storage: UnsafeMutablePointer<pthread_rwlock_t>

    init() {
        storage = .allocate(capacity: 1)
        storage.initialize(to: pthread_rwlock_t())
        let result = pthread_rwlock_init(storage, nil)
        precondition(result == 0, "pthread_rwlock_init failed with error \(result)")
    }

    func deallocate() {
        pthread_rwlock_destroy(storage)
        storage.deinitialize(count: 1)
        storage.deallocate()
    }

    @inlinable func lockRead() {
        let result = pthread_rwlock_rdlock(storage)
        precondition(result == 0, "pthread_rwlock_rdlock failed with error \(result)")
    }
    @inlinable func lockWrite() {
        let result = pthread_rwlock_wrlock(storage)
        precondition(result == 0, "pthread_rwlock_wrlock failed with error \(result)")
    }
    @inlinable func tryLockRead() -> Bool { pthread_rwlock_tryrdlock(storage) == 0 }
    @inlinable func tryLockWrite() -> Bool { pthread_rwlock_trywrlock(storage) == 0 }
    @inlinable func tryLockWriteAtOnce() -> Bool { pthread_rwlock_trywrlock(storage) == 0 }
    @inlinable func unlockRead() { pthread_rwlock_unlock(storage) }
    @inlinable func unlockWrite() { pthread_rwlock_unlock(storage) }
    #else
    // The state word: bits 0-29 count readers (all ones means write-locked), bit 30 says readers
    // are parked, bit 31 says writers are parked. Writers park on a second word, a notification
    // counter, so that waking one writer does not wake every reader. This is the design of the
    // futex reader-writer lock in Rust's standard library, written anew here in Swift.
    @usableFromInline let storage: UnsafeMutablePointer<UInt32.AtomicRepresentation>

    @usableFromInline static let readLocked: UInt32 = 1
    @usableFromInline static let mask: UInt32 = (1 << 30) - 1
    @usableFromInline static let writeLocked: UInt32 = mask
    @usableFromInline static let maxReaders: UInt32 = mask - 1
    @usableFromInline static let readersWaiting: UInt32 = 1 << 30
    @usableFromInline static let writersWaiting: UInt32 = 1 << 31

    init() {
        // Two words 64 bytes apart: the state, and the writers' notification counter on a cache
        // line of its own so that bumping it does not disturb readers.
        storage = .allocate(capacity: 32)
        storage.initialize(repeating: .init(0), count: 32)
    }

    func deallocate() {
        storage.deinitialize(count: 32)
        storage.deallocate()
    }

    /// Bytes 8 to 15 and 16 to 23 of the state's cache line, which this lock leaves unused: a
    /// lock built on it keeps there what it writes with every acquisition, in the line that
    /// the acquisition brings to its core anyway (see `RecursiveReadWriteLock`).
    var sideWords: UnsafeMutableRawPointer { UnsafeMutableRawPointer(storage) + 8 }

    @inlinable var state: LockWord { LockWord(at: storage) }
    var writerNotify: LockWord { LockWord(at: storage + 16) }

    @inlinable static func isUnlocked(_ s: UInt32) -> Bool { s & mask == 0 }
    @inlinable static func isWriteLocked(_ s: UInt32) -> Bool { s & mask == writeLocked }
    @inlinable static func hasReadersWaiting(_ s: UInt32) -> Bool { s & readersWaiting != 0 }
    @inlinable static func hasWritersWaiting(_ s: UInt32) -> Bool { s & writersWaiting != 0 }
    /// A reader may enter only when no writer holds the lock and nobody is parked: a parked
    /// writer keeps new readers out (writer preference), parked readers go first among readers.
    @inlinable static func isReadLockable(_ s: UInt32) -> Bool {
        return s & mask < maxReaders && s & (readersWaiting | writersWaiting) == 0
    }

    @inlinable func lockRead() {
        let s = state.load(ordering: .relaxed)
        if !Self.isReadLockable(s)
            || !state.weakCompareExchange(
                expected: s, desired: s + Self.readLocked,
                successOrdering: .acquiring, failureOrdering: .relaxed
            ).exchanged
        {
            lockReadContended()
        }
    }

    @inlinable func tryLockRead() -> Bool {
        var s = state.load(ordering: .relaxed)
        while Self.isReadLockable(s) {
            let (exchanged, original) = state.weakCompareExchange(
                expected: s, desired: s + Self.readLocked,
                successOrdering: .acquiring, failureOrdering: .relaxed)
            if exchanged { return true }
            s = original
        }
        return false
    }

    @inlinable func unlockRead() {
        let s =
            state.loadThenWrappingDecrement(by: Self.readLocked, ordering: .releasing)
            &- Self.readLocked
        // Readers only park behind a parked writer, so the last reader out wakes a writer.
        if Self.isUnlocked(s) && Self.hasWritersWaiting(s) {
            wakeWriterOrReaders(s)
        }
    }

    @inlinable func lockWrite() {
        if !state.weakCompareExchange(
            expected: 0, desired: Self.writeLocked,
            successOrdering: .acquiring, failureOrdering: .relaxed
        ).exchanged {
            lockWriteContended()
        }
    }

    /// Takes the exclusive side if the lock is free, with one compare-and-swap and no load
    /// before it: on a contended lock, a load first would fetch the line to share it, and the
    /// swap fetch it again to own it. It may fail even when the lock is free.
    @inlinable func tryLockWriteAtOnce() -> Bool {
        state.weakCompareExchange(
            expected: 0, desired: Self.writeLocked, successOrdering: .acquiring, failureOrdering: .relaxed
        ).exchanged
    }

    @inlinable func tryLockWrite() -> Bool {
        var s = state.load(ordering: .relaxed)
        while Self.isUnlocked(s) {
            let (exchanged, original) = state.weakCompareExchange(
                expected: s, desired: s + Self.writeLocked,
                successOrdering: .acquiring, failureOrdering: .relaxed)
            if exchanged { return true }
            s = original
        }
        return false
    }

    @inlinable func unlockWrite() {
        let s =
            state.loadThenWrappingDecrement(by: Self.writeLocked, ordering: .releasing)
            &- Self.writeLocked
        if Self.hasWritersWaiting(s) || Self.hasReadersWaiting(s) {
            wakeWriterOrReaders(s)
        }
    }

    @usableFromInline func lockReadContended() {
        var s = spinRead()
        while true {
            if Self.isReadLockable(s) {
                let (exchanged, original) = state.weakCompareExchange(
                    expected: s, desired: s + Self.readLocked,
                    successOrdering: .acquiring, failureOrdering: .relaxed)
                if exchanged { return }
                s = original
                continue
            }
            precondition(s & Self.mask != Self.maxReaders, "ReadWriteLock: too many readers")
            if !Self.hasReadersWaiting(s) {
                let (exchanged, original) = state.compareExchange(
                    expected: s, desired: s | Self.readersWaiting, ordering: .relaxed)
                if !exchanged {
                    s = original
                    continue
                }
            }
            futexWait(storage, s | Self.readersWaiting)
            s = spinRead()
        }
    }

    @usableFromInline func lockWriteContended() {
        var s = spinWrite()
        // Once this writer has parked, others may be parked too: keep the bit when it gets in so
        // that its unlock wakes them.
        var otherWritersWaiting: UInt32 = 0
        while true {
            if Self.isUnlocked(s) {
                let (exchanged, original) = state.weakCompareExchange(
                    expected: s, desired: s | Self.writeLocked | otherWritersWaiting,
                    successOrdering: .acquiring, failureOrdering: .relaxed)
                if exchanged { return }
                s = original
                continue
            }
            if !Self.hasWritersWaiting(s) {
                let (exchanged, original) = state.compareExchange(
                    expected: s, desired: s | Self.writersWaiting, ordering: .relaxed)
                if !exchanged {
                    s = original
                    continue
                }
            }
            otherWritersWaiting = Self.writersWaiting
            // Read the counter before re-checking the state, so a wake between the two is seen.
            let sequence = writerNotify.load(ordering: .acquiring)
            s = state.load(ordering: .relaxed)
            if Self.isUnlocked(s) || !Self.hasWritersWaiting(s) { continue }
            futexWait(storage + 16, sequence)
            s = spinWrite()
        }
    }

    /// Called with the lock free and someone parked: one writer goes first; readers only when no
    /// writer waits. If another thread locks it meanwhile, its unlock takes over this duty.
    @usableFromInline func wakeWriterOrReaders(_ observed: UInt32) {
        var s = observed
        if s == Self.writersWaiting {
            // The bit stays set while the woken writer gets going, so that a reader arriving
            // meanwhile waits behind it instead of taking the free lock first. The woken writer
            // keeps the bit when it gets in, and its own unlock comes back here.
            if wakeWriter() { return }
            // No writer was parked (one may be between setting the bit and parking: it will see
            // the counter change and retry): clear the bit.
            let (exchanged, original) = state.compareExchange(expected: s, desired: 0, ordering: .relaxed)
            if exchanged { return }
            s = original
        }
        if s == Self.readersWaiting | Self.writersWaiting {
            guard
                state.compareExchange(expected: s, desired: Self.readersWaiting, ordering: .relaxed)
                    .exchanged
            else { return }
            if wakeWriter() { return }
            // No writer was parked after all (it is between setting the bit and parking, and
            // will see the counter change): wake the readers so nobody sleeps forever.
            s = Self.readersWaiting
        }
        if s == Self.readersWaiting,
            state.compareExchange(expected: s, desired: 0, ordering: .relaxed).exchanged
        {
            futexWake(storage, Int32.max)
        }
    }

    func wakeWriter() -> Bool {
        writerNotify.wrappingIncrement(ordering: .releasing)
        return futexWake(storage + 16, 1) > 0
    }

    private func spinUntil(_ done: (UInt32) -> Bool) -> UInt32 {
        var remaining = spinLimit
        while true {
            let s = state.load(ordering: .relaxed)
            if done(s) || remaining == 0 { return s }
            baton_cpu_relax()
            remaining -= 1
        }
    }

    private func spinRead() -> UInt32 {
        spinUntil { s in
            !Self.isWriteLocked(s) || Self.hasReadersWaiting(s) || Self.hasWritersWaiting(s)
        }
    }

    private func spinWrite() -> UInt32 {
        spinUntil { s in Self.isUnlocked(s) || Self.hasWritersWaiting(s) }
    }
    #endif
}
