// The 1.0 spellings of renamed types, kept for one minor release (see CHANGELOG.md).

/// The 1.0 name of ``RecursiveReadWriteLock``, after the macro that uses it rather than what it is.
@available(*, deprecated, renamed: "RecursiveReadWriteLock")
public typealias SynchronizedLock = RecursiveReadWriteLock

/// The 1.0 name of ``LockReport``, one letter away from ``LockDiagnostics``, the switches and
/// statistics that produce it.
@available(*, deprecated, renamed: "LockReport")
public typealias LockDiagnostic = LockReport
