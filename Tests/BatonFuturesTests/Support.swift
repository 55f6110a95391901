import BatonFutures
import BatonInternals
import BatonLocks
import BatonTesting
import Foundation
import Testing

/// The longest any test waits for something that should happen at once: a bug fails the test
/// after this long instead of hanging the suite. Generous, because a task that code under test
/// starts (`Future { async … }`) joins the back of the cooperative pool's queue, behind every
/// test the parallel run has started: on a 2-core machine that queue took over 60 s to drain,
/// and a 30 s bound failed correct code.
let patience: Duration = .seconds(120)

/// `patience` from now, for a wait on a semaphore or a group.
var patienceDeadline: DispatchTime { .now() + patience.dispatchInterval }

struct TestError: Error, Equatable {
    let tag: Int
    init(_ tag: Int = 0) { self.tag = tag }
}

/// A future that did not complete within `patience`.
struct DidNotComplete: Error {}

extension Future {
    /// The outcome, waiting at most `patience`. The wait is bounded by a semaphore on a thread of
    /// its own, not by `Future.timeout`, which is code under test: a bug there must fail a test,
    /// not hang it.
    func outcome() async -> Result<Value, any Error> {
        let arrived = Protected<Result<Value, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        whenComplete { outcome in
            arrived.write { $0 = outcome }
            done.signal()
        }
        let completed = await withCheckedContinuation { continuation in
            Thread {
                continuation.resume(returning: done.wait(timeout: patienceDeadline) == .success)
            }.start()
        }
        guard completed, let outcome = arrived.value else { return .failure(DidNotComplete()) }
        return outcome
    }

    /// The value, failing the test if the future fails or does not complete within `patience`.
    func expectValue(sourceLocation: SourceLocation = #_sourceLocation) async throws -> Value {
        switch await outcome() {
        case .success(let value): return value
        case .failure(let error):
            Issue.record("expected a value, got \(error)", sourceLocation: sourceLocation)
            throw error
        }
    }

    /// The error, failing the test if the future succeeds or does not complete within `patience`.
    func expectError(sourceLocation: SourceLocation = #_sourceLocation) async -> (any Error)? {
        switch await outcome() {
        case .success(let value):
            Issue.record("expected an error, got \(value)", sourceLocation: sourceLocation)
            return nil
        case .failure(let error):
            if error is DidNotComplete {
                Issue.record("the future did not complete within \(patience)", sourceLocation: sourceLocation)
            }
            return error
        }
    }
}

/// Runs each body on a thread of its own, released together from a start barrier, and waits
/// (at most `patience`) for all of them. The waiting happens on a thread of its own too, so
/// the test never blocks a thread of Swift's cooperative pool.
func raceThreads(_ bodies: [@Sendable () -> Void]) async {
    let finished = await withCheckedContinuation { continuation in
        runOnNewThread {
            let threads = GatedThreads(count: bodies.count) { bodies[$0]() }
            threads.open()
            continuation.resume(returning: threads.join(timeout: patience) == 0)
        }
    }
    #expect(finished, "racing threads did not finish")
}

/// A thread-safe log of events, for checking order and counts.
final class EventLog<Event: Sendable>: Sendable {
    private let events = Protected<[Event]>([])
    func append(_ event: Event) { events.write { $0.append(event) } }
    var all: [Event] { events.value }
    var count: Int { events.read { $0.count } }
}

/// Every duplicate-completion report of the test run, recorded by one handler installed once.
/// Tests look only at reports about their own probe type, so tests running in parallel never
/// swap the global handler from under each other.
enum DuplicateReports {
    private static let log = EventLog<FutureDiagnostics.DuplicateCompletion>()
    private static let installed: Bool = {
        FutureDiagnostics.duplicateCompletionHandler = { log.append($0) }
        return true
    }()

    /// Installs the recording handler (once); call before completing anything.
    static func install() { _ = installed }

    /// The reports about futures whose value type's name contains `typeName`.
    static func about(_ typeName: String) -> [FutureDiagnostics.DuplicateCompletion] {
        log.all.filter { $0.valueType.contains(typeName) }
    }
}
