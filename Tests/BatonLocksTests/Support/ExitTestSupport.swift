import Foundation
import Testing

// Helpers for exit-test bodies. An exit test runs its body in a child process, so the body can
// capture only Codable and Sendable values, never a lock or a semaphore: each body builds its own
// state and calls these global functions.

/// Ends the process with a *successful* exit status if it is still running after `timeout`, so
/// that an exit test whose body deadlocks (a lock that does not detect its misuse) fails its
/// `.failure` expectation instead of hanging the suite.
func exitSuccessfullyIfStillRunning(after timeout: DispatchTimeInterval = generousTimeout) {
    _ = startThread {
        _ = DispatchSemaphore(value: 0).wait(timeout: .now() + timeout)
        exit(EXIT_SUCCESS)
    }
}

/// What an exit test's child process wrote to standard error.
func standardError(of result: ExitTest.Result?) -> String {
    String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
}
