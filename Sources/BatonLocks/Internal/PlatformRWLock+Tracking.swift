import CBatonPlatform

/// The reader-writer operations of `ReadWriteLock` and `RecursiveReadWriteLock`: straight to the
/// platform lock while every diagnostic is off, through `LockTracking` otherwise.
///
/// The lock's identity comes as an autoclosure, read only on the tracked path. Passed by value,
/// the 64-byte identity was copied out of the lock object on every acquisition, diagnostics
/// on or off: about ten instructions and two more cache lines of the object on the fast path.
extension PlatformRWLock {
    @inlinable
    func lockRead(for owner: AnyObject, _ identity: @autoclosure () -> LockIdentity, file: StaticString, line: UInt) {
        if _slowPath(baton_lock_diagnostics() != 0) {
            LockTracking.acquire(
                owner, identity(), .shared, file: file, line: line, tryAcquire: { tryLockRead() },
                acquire: { lockRead() })
        } else {
            lockRead()
        }
    }

    @inlinable
    func lockWrite(for owner: AnyObject, _ identity: @autoclosure () -> LockIdentity, file: StaticString, line: UInt) {
        if _slowPath(baton_lock_diagnostics() != 0) {
            LockTracking.acquire(
                owner, identity(), .exclusive, file: file, line: line, tryAcquire: { tryLockWrite() },
                acquire: { lockWrite() })
        } else {
            lockWrite()
        }
    }

    @inlinable
    func tryLockRead(for owner: AnyObject, _ identity: @autoclosure () -> LockIdentity, file: StaticString, line: UInt)
        -> Bool
    {
        guard _slowPath(baton_lock_diagnostics() != 0) else { return tryLockRead() }
        return LockTracking.tryAcquire(
            owner, identity(), .shared, file: file, line: line, tryAcquire: { tryLockRead() })
    }

    @inlinable
    func tryLockWrite(for owner: AnyObject, _ identity: @autoclosure () -> LockIdentity, file: StaticString, line: UInt)
        -> Bool
    {
        guard _slowPath(baton_lock_diagnostics() != 0) else { return tryLockWrite() }
        return LockTracking.tryAcquire(
            owner, identity(), .exclusive, file: file, line: line, tryAcquire: { tryLockWrite() })
    }

    @inlinable
    func unlockRead(for owner: AnyObject) {
        if _slowPath(baton_lock_diagnostics() != 0) {
            LockTracking.release(owner) { unlockRead() }
        } else {
            unlockRead()
        }
    }

    @inlinable
    func unlockWrite(for owner: AnyObject) {
        if _slowPath(baton_lock_diagnostics() != 0) {
            LockTracking.release(owner) { unlockWrite() }
        } else {
            unlockWrite()
        }
    }
}
