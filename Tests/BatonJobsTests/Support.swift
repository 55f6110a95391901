import BatonJobs
import BatonLocks
import Dispatch
import Foundation
import Testing

/// How long any wait in these tests may take before the test fails instead of hanging.
let testDeadline: Double = 60

/// Runs a blocking call on a thread of its own and waits for it at most `seconds`. Returns
/// false, after recording an issue, if it did not return in time: a hang fails the test
/// instead of stalling the suite.
@discardableResult
func finishes(
    within seconds: Double = testDeadline, _ what: String = "wait", stackSize: Int = 1 << 22,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: @escaping @Sendable () -> Void
) -> Bool {
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        body()
        done.signal()
    }
    thread.stackSize = stackSize
    thread.start()
    if done.wait(timeout: .now() + seconds) == .timedOut {
        Issue.record("\(what) did not finish within \(seconds) s", sourceLocation: sourceLocation)
        return false
    }
    return true
}

/// Waits for every job of `queue` with a deadline.
@discardableResult
func drain(_ queue: JobQueue, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
    finishes("waitUntilAllJobsAreFinished on \(queue.name)", sourceLocation: sourceLocation) {
        queue.waitUntilAllJobsAreFinished()
    }
}

/// Polls `condition` until it holds or the deadline passes; the condition, not the time, is
/// what the caller then checks.
func eventually(within seconds: Double = testDeadline, _ condition: () -> Bool) -> Bool {
    let end = Date().addingTimeInterval(seconds)
    while !condition() {
        if Date() > end { return false }
        usleep(1000)
    }
    return true
}

/// An append-only log shared by jobs.
final class Log<Entry: Sendable>: Sendable {
    private let entries = Protected<[Entry]>([])
    func append(_ entry: Entry) { entries.write { $0.append(entry) } }
    var all: [Entry] { entries.value }
}

/// A counter shared by jobs.
final class Counter: Sendable {
    private let count = Protected(0)
    func increment() { count.write { $0 += 1 } }
    var value: Int { count.value }
}

struct TestError: Error, Equatable {
    let id: Int
}

extension JobState {
    /// A short name for comparing sequences of states.
    var tag: String {
        switch self {
        case .pending: "pending"
        case .ready: "ready"
        case .executing: "executing"
        case .finished(.succeeded): "succeeded"
        case .finished(.failed): "failed"
        case .finished(.cancelled): "cancelled"
        }
    }
}
