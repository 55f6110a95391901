import BatonInternals
import BatonTesting
import Testing

/// Starts `count` threads, parks each at a start gate until all exist, releases them together,
/// and waits for all of them to return.
///
/// Real threads, not tasks: a body that blocks in a lock must not hold a thread of the
/// cooperative pool. If some have not returned within `timeout`, records an issue that says how
/// many are stuck and returns `false`, leaving them behind: a thread parked for good (a lost
/// wake-up) cannot be unstuck, and a test's time limit does not end a test blocked
/// synchronously. The bound is not a timing assertion: correct code meets it by orders of
/// magnitude, under the thread sanitizer on two cores too.
///
/// - Parameter body: Runs once on each thread, with the thread's index in `0..<count`.
/// - Returns: `true` if every thread returned within `timeout`.
@discardableResult
public func raceThreads(
    _ count: Int,
    timeout: Duration = .seconds(120),
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: @escaping @Sendable (_ index: Int) -> Void
) -> Bool {
    let threads = GatedThreads(count: count, body: body)
    threads.open()
    let stuck = threads.join(timeout: timeout)
    guard stuck == 0 else {
        Issue.record(
            "\(stuck) of \(count) racing threads had not returned after \(timeout): stuck (a deadlock or a lost wake-up)",
            sourceLocation: sourceLocation)
        return false
    }
    return true
}
