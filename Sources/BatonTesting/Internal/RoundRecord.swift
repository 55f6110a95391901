import BatonLocks

/// One thread's part of a round: the operations it finished and the one it is inside, readable
/// by the driver at any time, even while the thread is stuck in an operation that never
/// returns.
///
/// Each thread has its own record, so recording never makes the threads wait for each other.
final class RoundRecord<Input: Sendable, Output: Sendable>: Sendable {
    private struct State {
        var history: [HistoryEntry<Input, Output>] = []
        var inside: (input: Input, invocation: UInt64)?
    }

    let thread: Int
    private let state = Protected(State())

    init(thread: Int) { self.thread = thread }

    /// The thread has started `input` at tick `invocation`.
    func begin(_ input: Input, at invocation: UInt64) {
        state.write { $0.inside = (input, invocation) }
    }

    /// The operation begun last returned `output` at tick `response`.
    func end(_ output: Output, at response: UInt64) {
        state.write { state in
            guard let (input, invocation) = state.inside else { return }
            state.history.append(
                HistoryEntry(input: input, output: output, invocation: invocation, response: response, thread: thread))
            state.inside = nil
        }
    }

    /// What the thread has done so far.
    var snapshot: (history: [HistoryEntry<Input, Output>], inside: (input: Input, invocation: UInt64)?) {
        state.read { ($0.history, $0.inside) }
    }

    /// The round's outcome from every thread's record. If the round did not finish, a thread
    /// that is inside no operation but has some left is stuck before its next one.
    static func outcome(of records: [RoundRecord], scenario: Scenario<Input>, finished: Bool, clock: LogicalClock)
        -> RoundOutcome<Input, Output>
    {
        var outcome = RoundOutcome<Input, Output>(history: [], inside: [])
        for record in records {
            let (history, inside) = record.snapshot
            outcome.history += history
            if let inside {
                outcome.inside.append((record.thread, inside.input, inside.invocation, true))
            } else if !finished, history.count < scenario.threads[record.thread].count {
                outcome.inside.append(
                    (record.thread, scenario.threads[record.thread][history.count], clock.tick(), false))
            }
        }
        return outcome
    }
}

/// The objects of rounds whose operations never returned, kept for the life of the process: the
/// stranded threads or tasks still use them, and a leak checker would otherwise report the
/// suspended tasks that only they reference.
enum Stranded {
    private static let objects = Protected<[any Sendable]>([])

    static func keep(_ object: any Sendable) {
        objects.write { $0.append(object) }
    }
}
