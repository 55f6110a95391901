/// What a linearizability check found: nothing in its budget, a history no sequential order
/// explains (shrunk to the fewest operations that still show it), or operations that never
/// returned; and the seed that replays it.
///
/// Its ``description`` is the text a failing test prints:
///
/// ```text
/// not linearizable, in round 212 of 2000 (2 threads × 4 operations), shrunk to 3 operations:
///   thread 0  increment → 1   [1–4]
///   thread 1  increment → 1   [2–5]
///   thread 1  read → 1        [6–7]
/// not linearizable: after 1 of 3 operations, in state 1,
///   #1 thread 1: increment → 1 [2–5] cannot take effect, …
/// replay: run(seed: 0x5EED)
/// ```
///
/// Thread safety: a plain value; `Sendable`.
public struct LinearizabilityReport: Sendable, Hashable, CustomStringConvertible {
    /// What the check concluded.
    public enum Outcome: Sendable, Hashable {
        /// Every round's history was linearizable.
        case passed
        /// A round's history is not linearizable: ``LinearizabilityReport/operations`` shows it.
        case notLinearizable
        /// Some operations had not returned when the check's time ran out (a lost wake-up, a
        /// deadlock): ``LinearizabilityReport/operations`` shows them, without an output.
        case hung
        /// No round failed, but some were not decided: the checker's step budget ran out on
        /// their histories, or the machine ran none of a round's remaining operations before
        /// the budget's time ran out (``LinearizabilityReport/explanation`` says so).
        case undecided
    }

    /// What the check concluded.
    public var outcome: Outcome
    /// The seed the check started from.
    public var seed: UInt64
    /// The seed of the round that failed: `run(seed:)` with it runs that round's operations
    /// first (and, under the deterministic scheduler, in the same interleaving). Nil when the
    /// check passed.
    public var failingSeed: UInt64?
    /// Rounds run, counting the failing one but not the replays that shrank it.
    public var rounds: Int
    /// The budget the check had.
    public var budget: CheckBudget
    /// The round's shape: threads (or tasks) and operations per thread.
    public var threads: Int
    /// Operations each thread drew.
    public var operationsPerThread: Int
    /// The failing history, in the order the operations started; for a hang, every operation
    /// of the round, those still inside without an output. Empty when the check passed.
    public var operations: [ReportedOperation]
    /// How many operations the failing round had before shrinking.
    public var operationsBeforeShrinking: Int
    /// Why the history fails, in the model's states (the checker's explanation), or why a
    /// round was not decided; nil otherwise.
    public var explanation: String?
    /// Rounds whose history the checker could not decide within its step budget.
    public var undecidedRounds: Int
    /// How long the check took.
    public var elapsed: Duration

    /// Whether the check passed: no failing round, and no undecided one.
    public var passed: Bool { outcome == .passed }

    /// The operations that had not returned, for a hang.
    public var hungOperations: [ReportedOperation] { operations.filter { $0.output == nil } }

    public var description: String {
        let shape = "\(threads) threads × \(operationsPerThread) operations"
        let when = rounds == 0 ? "run one at a time on one thread" : "in round \(rounds) (\(shape))"
        var lines: [String] = []
        switch outcome {
        case .passed:
            return "linearizable: \(rounds) rounds (\(shape)) in \(elapsed.roundedForReport), seed \(seed.hexSeed)"
        case .undecided:
            if let explanation { return "undecided: \(explanation). Seed \(seed.hexSeed)" }
            return "undecided: \(undecidedRounds) of \(rounds) rounds (\(shape)) were too large for the checker's "
                + "step budget; use fewer operations per thread. Seed \(seed.hexSeed)"
        case .notLinearizable:
            let shrunk =
                operations.count < operationsBeforeShrinking
                ? ", shrunk from \(operationsBeforeShrinking) to \(operations.count) operations:"
                : ", \(operations.count) operations:"
            lines.append("not linearizable, \(when)\(shrunk)")
        case .hung:
            let inside = hungOperations
            let threadList = Set(inside.map(\.thread)).sorted().map(String.init).joined(separator: ", ")
            lines.append(
                "hung: \(inside.count) operation\(inside.count == 1 ? "" : "s") had not returned when the check's "
                    + "time (\(budget.time)) ran out, \(when); still inside: thread "
                    + threadList + ":")
        }
        let width = operations.map(\.text.count).max() ?? 0
        for (index, operation) in operations.enumerated() {
            lines.append("  #\(index) " + operation.line(padding: width))
        }
        if let explanation { lines.append(explanation) }
        if let failingSeed { lines.append("replay: run(seed: \(failingSeed.hexSeed))") }
        return lines.joined(separator: "\n")
    }
}

/// One operation of a reported history: which thread ran it, what it was asked and returned,
/// and its interval on the history's logical clock.
///
/// Thread safety: a plain value; `Sendable`.
public struct ReportedOperation: Sendable, Hashable, CustomStringConvertible {
    /// The thread (or task) that ran it, from 0.
    public var thread: Int
    /// The operation and its output as the model describes them (`increment → 3`), or the
    /// operation alone if it had not returned.
    public var text: String
    /// What it returned, as `String(describing:)` writes it; nil if it had not returned.
    public var output: String?
    /// The clock tick taken just before it started.
    public var invocation: UInt64
    /// The clock tick taken just after it returned; nil if it had not.
    public var response: UInt64?

    /// Creates a reported operation.
    public init(thread: Int, text: String, output: String?, invocation: UInt64, response: UInt64?) {
        self.thread = thread
        self.text = text
        self.output = output
        self.invocation = invocation
        self.response = response
    }

    public var description: String { line(padding: 0) }

    func line(padding: Int) -> String {
        let body = output == nil && !text.hasSuffix(" (not started)") ? text + " … never returned" : text
        let pad = String(repeating: " ", count: max(0, padding - text.count))
        return "thread \(thread)  \(body)\(pad)  [\(invocation)–\(response.map(String.init) ?? "")]"
    }
}

extension UInt64 {
    /// A seed as people copy it into a replay: `0x` and sixteen hex digits.
    var hexSeed: String {
        let digits = String(self, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: 16 - digits.count) + digits
    }
}

extension Duration {
    /// Milliseconds below a second, seconds with two decimals above.
    var roundedForReport: String {
        let (seconds, attoseconds) = components
        let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        if milliseconds < 1000 { return "\(milliseconds) ms" }
        let hundredths = milliseconds / 10
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction) s"
    }
}
