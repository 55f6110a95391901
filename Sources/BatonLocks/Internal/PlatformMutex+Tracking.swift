import CBatonPlatform

/// The mutex operations of `Lock` and `RecursiveLock`: straight to the platform mutex while
/// every diagnostic is off, through `LockTracking` otherwise.
///
/// The lock's identity comes as an autoclosure, read only on the tracked path. Passed by value,
/// the 64-byte identity was copied out of the lock object on every acquisition, diagnostics
/// on or off: about ten instructions and two more cache lines of the object on the fast path.
extension PlatformMutex {
    @inlinable
    func lock(for owner: AnyObject, _ identity: @autoclosure () -> LockIdentity, file: StaticString, line: UInt) {
        if _slowPath(baton_lock_diagnostics() != 0) {
            LockTracking.acquire(
                owner, identity(), .exclusive, file: file, line: line, tryAcquire: { tryLock() },
                acquire: { lock() })
        } else {
            lock()
        }
    }

    @inlinable
    func lock(
        for owner: AnyObject, _ identity: @autoclosure () -> LockIdentity, timeout: Duration, file: StaticString,
        line: UInt
    ) -> Bool {
        guard _slowPath(baton_lock_diagnostics() != 0) else { return lock(timeout: timeout) }
        return LockTracking.timedAcquire(
            owner, identity(), .exclusive, file: file, line: line, tryAcquire: { tryLock() },
            acquire: { lock(timeout: timeout) })
    }

    @inlinable
    func tryLock(for owner: AnyObject, _ identity: @autoclosure () -> LockIdentity, file: StaticString, line: UInt)
        -> Bool
    {
        guard _slowPath(baton_lock_diagnostics() != 0) else { return tryLock() }
        return LockTracking.tryAcquire(
            owner, identity(), .exclusive, file: file, line: line, tryAcquire: { tryLock() })
    }

    @inlinable
    func unlock(for owner: AnyObject) {
        if _slowPath(baton_lock_diagnostics() != 0) {
            LockTracking.release(owner) { unlock() }
        } else {
            unlock()
        }
    }
}
