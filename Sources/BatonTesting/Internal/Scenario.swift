/// One round's operations: a list per thread (or task), in the order that thread runs them.
struct Scenario<Input> {
    var threads: [[Input]]

    var operationCount: Int { threads.reduce(0) { $0 + $1.count } }

    /// `threads` lists of `perThread` operations each, drawn from `operations`.
    static func draw(
        threads: Int, perThread: Int, from operations: CheckOperations<Input>, using random: inout SeededGenerator
    ) -> Scenario {
        Scenario(threads: (0..<threads).map { _ in (0..<perThread).map { _ in operations.draw(using: &random) } })
    }

    /// The scenarios one step smaller, the biggest cut first: each whole thread left out (while
    /// another remains), then each single operation.
    var smaller: [Scenario] {
        var result: [Scenario] = []
        if threads.count > 1 {
            for thread in threads.indices {
                var fewer = self
                fewer.threads.remove(at: thread)
                result.append(fewer)
            }
        }
        for thread in threads.indices {
            for operation in threads[thread].indices where operationCount > 1 {
                var fewer = self
                fewer.threads[thread].remove(at: operation)
                if fewer.threads[thread].isEmpty { fewer.threads.remove(at: thread) }
                result.append(fewer)
            }
        }
        return result
    }
}

extension Scenario: Sendable where Input: Sendable {}

/// What one run of a scenario left: every operation that returned, and those that had not
/// when the round's deadline passed.
struct RoundOutcome<Input, Output> {
    var history: [HistoryEntry<Input, Output>]
    /// The operations still running at the deadline, with their thread and invocation tick;
    /// empty when every operation returned. A thread that had not started its next operation
    /// when the deadline passed (the machine gave it no time) counts it as inside, not started,
    /// with a tick taken at the deadline.
    var inside: [(thread: Int, input: Input, invocation: UInt64, started: Bool)]

    /// Some operation began and had not returned: the object hangs.
    var hung: Bool { inside.contains { $0.started } }
    /// Operations were left that never started, and none hung: the machine (a cooperative pool
    /// kept busy by other work) ran nothing more of the round before the deadline. Nothing can
    /// be said of the object.
    var starved: Bool { !inside.isEmpty && !hung }
}
