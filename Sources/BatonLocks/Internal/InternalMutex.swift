/// A value behind a bare platform mutex, for the lock diagnostics' own state. It never goes
/// through the diagnostics itself, which would recurse.
final class InternalMutex<State> {
    private let mutex = PlatformMutex()
    /// Guarded by `mutex`.
    private var state: State

    init(_ initial: State) {
        state = initial
    }

    deinit {
        mutex.deallocate()
    }

    func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        mutex.lock()
        defer { mutex.unlock() }
        return try body(&state)
    }
}

// `mutex` guards every access to `state`.
extension InternalMutex: @unchecked Sendable {}
