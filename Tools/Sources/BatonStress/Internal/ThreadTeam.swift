import BatonLocks
import BatonTesting

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
        let threads = GatedThreads(count: count) { index in
            let result = body(index)
            results.write { $0[index] = result }
        }
        threads.open()
        guard threads.join(timeout: timeout) == 0 else { return nil }
        return results.value.map { $0! }
    }

    /// Runs `body` on a thread of its own and waits for it at most `timeout`; false if it had
    /// not returned by then (the thread is abandoned).
    static func wait(timeout: Duration, for body: @escaping @Sendable () -> Void) -> Bool {
        run(threads: 1, timeout: timeout) { _ in body() } != nil
    }
}
