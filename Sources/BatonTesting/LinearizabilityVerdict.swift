/// What ``LinearizabilityChecker`` concluded about a history.
///
/// Thread safety: a plain value; `Sendable`.
public enum LinearizabilityVerdict: Sendable, Hashable, CustomStringConvertible {
    /// Some order of the operations respects real time and the model: the history is
    /// linearizable.
    case linearizable
    /// No order works; the violation says where the best attempt got stuck.
    case notLinearizable(LinearizabilityViolation)
    /// The step budget ran out in these partitions (the whole history's when it was not
    /// partitioned: `[nil]`) before an answer; every other partition was linearizable.
    case undecided(partitions: [String?], stepBudget: Int)

    /// Whether this is ``linearizable``.
    public var isLinearizable: Bool {
        if case .linearizable = self { return true }
        return false
    }

    /// The violation, when the history is not linearizable.
    public var violation: LinearizabilityViolation? {
        if case .notLinearizable(let violation) = self { return violation }
        return nil
    }

    /// Whether this is ``undecided(partitions:stepBudget:)``.
    public var isUndecided: Bool {
        if case .undecided = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .linearizable:
            "linearizable"
        case .notLinearizable(let violation):
            violation.description
        case .undecided(let partitions, let budget):
            "undecided: the step budget (\(budget)) ran out in "
                + partitions.map { $0.map { "partition \($0)" } ?? "the history" }.joined(separator: ", ")
        }
    }
}
