/// How long a linearizability check searches: at most so many rounds, and at most so much time.
///
/// A round makes a fresh object, runs a few operations on it from several threads (or tasks) at
/// once and checks the history. The check stops at the first round that fails, or when either
/// limit is reached. Time includes shrinking a failure and waiting for a round whose operations
/// do not return: a check never runs longer than ``time``, whatever the object does.
///
/// ```swift
/// try check.run(budget: CheckBudget(rounds: 500))                       // a quick check
/// try check.run(budget: CheckBudget(rounds: nil, time: .seconds(30)))  // a soak, in a nightly job
/// ```
///
/// A limit left out is the default's: `CheckBudget(time: .seconds(30))` still stops after
/// 2,000 rounds, which take well under a second for most types. Give `rounds: nil` for a check
/// that should use all its time.
///
/// Thread safety: a plain value; `Sendable`.
public struct CheckBudget: Sendable, Hashable, CustomStringConvertible {
    /// The most rounds to run; nil for as many as fit in ``time``.
    public var rounds: Int?
    /// The most time the check takes, search, shrinking and hang detection included.
    public var time: Duration

    /// A budget of `rounds` rounds (nil: no limit but time) within `time`.
    ///
    /// Neither may be zero or negative: ``LinearizabilityCheck/run(budget:seed:)`` throws
    /// ``LinearizabilityCheckError/emptyBudget(_:)`` for such a budget.
    public init(rounds: Int? = CheckBudget.default.rounds, time: Duration = CheckBudget.default.time) {
        self.rounds = rounds
        self.time = time
    }

    /// 2,000 rounds within 2 seconds. On a 2-core Linux machine, in a release build, it found
    /// each of nine bugs of different kinds (those of the BatonTesting article among them) in
    /// 100 of 100 checks, most within a few hundred rounds, and a correct object's check takes
    /// about a third of a second.
    public static var `default`: CheckBudget { CheckBudget(rounds: 2_000, time: .seconds(2)) }

    public var description: String {
        (rounds.map { "\($0) rounds within " } ?? "") + "\(time)"
    }

    /// Whether the budget allows any round at all.
    var isEmpty: Bool {
        (rounds.map { $0 <= 0 } ?? false) || time <= .zero
    }
}
