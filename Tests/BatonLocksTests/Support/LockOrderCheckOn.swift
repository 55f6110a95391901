import BatonLocks
import Testing

/// Turns the lock-order check on for the suite it marks, and puts the setting back afterwards.
///
/// The check is on by default in a debug build only (a test of its own checks that default), and
/// the diagnostics tests also run in the optimised build that CI runs under the thread sanitizer.
/// In a debug build the trait leaves the default alone, so that it stays the thing tested.
struct LockOrderCheckOn: SuiteTrait, TestScoping {
    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        #if DEBUG
        try await function()
        #else
        let before = LockDiagnostics.checksLockOrder
        LockDiagnostics.checksLockOrder = true
        defer { LockDiagnostics.checksLockOrder = before }
        try await function()
        #endif
    }
}

extension Trait where Self == LockOrderCheckOn {
    /// The lock-order check on in every build configuration (see ``LockOrderCheckOn``).
    static var lockOrderCheckOn: Self { Self() }
}
