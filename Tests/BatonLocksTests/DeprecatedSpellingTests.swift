import BatonLocks
import Testing

/// The spellings renamed under the versioning promise still build and name the same types.
@Suite struct DeprecatedSpellingTests {
    /// Reached through a protocol, so that the tests call no deprecated declaration themselves
    /// (a warning, so an error in CI).
    let old: any OldSpellings = Spellings()

    @Test func synchronizedLockIsRecursiveReadWriteLock() {
        #expect(ObjectIdentifier(old.synchronizedLockType) == ObjectIdentifier(RecursiveReadWriteLock.self))
        #expect(old.nestedWithLockOnASynchronizedLock() == 2)
    }

    /// The digester reports `setReportHandler(_:)` and `defaultReportHandler(_:)` as changing a
    /// parameter's type; a handler written with the old name still fits both.
    @Test func aHandlerWrittenForLockDiagnosticStillBuilds() {
        #expect(ObjectIdentifier(old.lockDiagnosticType) == ObjectIdentifier(LockReport.self))
        // That this file builds is most of the check; the closures keep the types they were given.
        let (install, printing) = old.functionsTakingTheOldName()
        #expect(install is (@escaping @Sendable (LockReport) -> Void) -> Void)
        #expect(printing is @Sendable (LockReport) -> Void)
    }
}

protocol OldSpellings {
    var synchronizedLockType: Any.Type { get }
    var lockDiagnosticType: Any.Type { get }
    func nestedWithLockOnASynchronizedLock() -> Int
    func functionsTakingTheOldName() -> (install: Any, printing: Any)
}

private struct Spellings: OldSpellings {
    @available(*, deprecated)
    var synchronizedLockType: Any.Type { SynchronizedLock.self }

    @available(*, deprecated)
    var lockDiagnosticType: Any.Type { LockDiagnostic.self }

    @available(*, deprecated)
    func nestedWithLockOnASynchronizedLock() -> Int {
        let lock = SynchronizedLock(name: "DeprecatedSpellingTests")
        return lock.withLock { lock.withLock { 2 } }
    }

    @available(*, deprecated)
    func functionsTakingTheOldName() -> (install: Any, printing: Any) {
        let install: (@escaping @Sendable (LockDiagnostic) -> Void) -> Void = LockDiagnostics.setReportHandler
        let printing: @Sendable (LockDiagnostic) -> Void = LockDiagnostics.defaultReportHandler
        // Built, not installed: the handler is process-wide and other suites capture reports.
        return (install, printing)
    }
}
