import BatonLocks
import Foundation

/// Runs a body on several threads of their own, released together from a start gate, and
/// collects what each returns.
enum ThreadTeam {
    /// Runs `body(index)` on `count` new threads released at once, and returns their results in
    /// index order; nil if they had not all finished within `timeout` (a hang: the threads are
    /// abandoned, still parked wherever they hang).
    static func run<Result: Sendable>(
        threads count: Int, timeout: Duration, _ body: @escaping @Sendable (Int) -> Result
    ) -> [Result]? {
        let results = Protected([Result?](repeating: nil, count: count))
        let ready = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        for index in 0..<count {
            done.enter()
            let thread = Thread {
                ready.signal()
                gate.wait()
                let result = body(index)
                results.write { $0[index] = result }
                done.leave()
            }
            thread.start()
        }
        for _ in 0..<count { ready.wait() }
        for _ in 0..<count { gate.signal() }
        guard done.wait(timeout: .now() + timeout.dispatchInterval) == .success else { return nil }
        return results.value.map { $0! }
    }

    /// Runs `body` on a thread of its own and waits for it at most `timeout`; false if it had
    /// not returned by then (the thread is abandoned).
    static func wait(timeout: Duration, for body: @escaping @Sendable () -> Void) -> Bool {
        run(threads: 1, timeout: timeout) { _ in body() } != nil
    }
}

extension Duration {
    /// The duration as a Dispatch interval, in whole microseconds.
    var dispatchInterval: DispatchTimeInterval {
        let (seconds, attoseconds) = components
        return .microseconds(Int(seconds) * 1_000_000 + Int(attoseconds / 1_000_000_000_000))
    }

    /// The duration in seconds, as a floating-point number.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
