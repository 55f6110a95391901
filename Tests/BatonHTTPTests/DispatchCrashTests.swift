import BatonHTTPTestSupport
import Dispatch
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether `issue` is an exit test's report that its process, expected to succeed, was ended by
/// `exitWhenDispatchCrashes()`.
func isDispatchCrash(_ issue: Issue) -> Bool {
    "\(issue)".contains(".success → .exitCode(\(dispatchCrashExitCode))")
}

/// `exitWhenDispatchCrashes()` and `isDispatchCrash(_:)` decide whether a failed run of the thousand-fault test is the
/// platform's known issue, so it must tell the two crashes apart exactly.
@Suite(.timeLimit(.minutes(1))) struct DispatchCrashTests {
    /// The signal a Swift trap raises.
    #if arch(x86_64)
    static let trapSignal = SIGILL
    #else
    static let trapSignal = SIGTRAP
    #endif

    #if os(Linux)
    @Test func aCrashInsideLibdispatchEndsTheProcessWithItsExitCode() async {
        await #expect(processExitsWith: .exitCode(dispatchCrashExitCode)) {
            exitWhenDispatchCrashes()
            // Resuming a source that is not suspended stops the process inside libdispatch.
            let source = DispatchSource.makeTimerSource()
            source.resume()
            source.resume()
        }
    }
    #endif

    @Test func aCrashOfItsOwnIsLeftToTheHandlerBefore() async {
        // A trap in Swift code: the process still dies of the signal, as it would without the
        // handler, and is never taken for the platform's crash.
        await #expect(processExitsWith: .signal(Self.trapSignal)) {
            exitWhenDispatchCrashes()
            let sentinel = Int.random(in: 1...2)
            precondition(sentinel > 2, "a crash in Swift code")
        }
    }

    @Test func anExitWithTheCodeIsRecognisedAndNoOtherExit() async {
        await withKnownIssue("the child's exit") {
            await #expect(processExitsWith: .success) { exit(dispatchCrashExitCode) }
        } matching: {
            isDispatchCrash($0)
        }
        await withKnownIssue("the child's exit") {
            await #expect(processExitsWith: .success) { exit(dispatchCrashExitCode + 1) }
        } matching: {
            !isDispatchCrash($0)
        }
    }
}
