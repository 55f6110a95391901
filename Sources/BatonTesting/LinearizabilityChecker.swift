/// Decides whether a concurrent history is linearizable: whether its operations can be put in
/// one order that respects real time (an operation that returned before another started comes
/// first) and in which the model accepts every output.
///
/// The search is Wing and Gong's backtracking with Lowe's memo of the (linearized operations,
/// model state) pairs already explored, the approach of Porcupine and Lincheck. It is
/// exponential in the worst case, so keep each history small: check rounds of a few hundred
/// operations, and split a history whose operations on different keys are independent with
/// ``check(_:partitionedBy:)`` (linearizability is compositional: the whole is linearizable
/// exactly when every key's sub-history is). The search stops after ``stepBudget`` candidate
/// operations per partition and answers ``LinearizabilityVerdict/undecided(partitions:stepBudget:)``
/// rather than run on.
///
/// ```swift
/// let checker = LinearizabilityChecker(model: CounterModel())
/// let verdict = checker.check(logs.flatMap(\.entries))
/// if case .notLinearizable(let violation) = verdict { print(violation) }
/// ```
///
/// Thread safety: a value; each call to `check` is independent, but the checker is not
/// `Sendable` since it holds its model. Use one per thread.
public struct LinearizabilityChecker<Input, Output> {
    /// The most candidate operations the search tries in one partition before it gives up.
    public let stepBudget: Int

    /// Searches the operations of `history` at `indices` (one partition).
    private let searchPartition: (_ history: [HistoryEntry<Input, Output>], _ indices: [Int]) -> PartitionOutcome

    /// How many operations of the longest consistent order a violation shows.
    private static var tailLength: Int { 6 }

    private enum PartitionOutcome {
        case linearizable
        case violation(LinearizabilityViolation)
        case exhausted
    }

    /// Creates a checker for a model with one next state per output.
    ///
    /// - Parameters:
    ///   - model: The sequential specification.
    ///   - stepBudget: The most candidate operations to try per partition. Must be positive.
    public init<Model: SequentialModel>(model: Model, stepBudget: Int = 1_000_000)
    where Model.Input == Input, Model.Output == Output {
        precondition(stepBudget > 0, "LinearizabilityChecker: stepBudget must be positive (got \(stepBudget))")
        self.stepBudget = stepBudget
        searchPartition = { history, indices in
            var search = LinearizationSearch<Model.State>(
                intervals: indices.map { (history[$0].invocation, history[$0].response) })
            let outcome = search.run(initial: model.initialState, budget: stepBudget) { state, operation in
                let entry = history[indices[operation]]
                return model.step(state, entry.input, entry.output)
            }
            return Self.conclude(
                outcome, history: history, indices: indices,
                describeOperation: { model.describe($0.input, $0.output) },
                describeState: { model.describe($0) })
        }
    }

    /// Creates a checker for a model whose operations may lead to several states; the search
    /// follows the set of states the object may be in.
    ///
    /// - Parameters:
    ///   - model: The sequential specification.
    ///   - stepBudget: The most candidate operations to try per partition. Must be positive.
    public init<Model: NondeterministicModel>(model: Model, stepBudget: Int = 1_000_000)
    where Model.Input == Input, Model.Output == Output {
        precondition(stepBudget > 0, "LinearizabilityChecker: stepBudget must be positive (got \(stepBudget))")
        self.stepBudget = stepBudget
        searchPartition = { history, indices in
            var search = LinearizationSearch<Set<Model.State>>(
                intervals: indices.map { (history[$0].invocation, history[$0].response) })
            let outcome = search.run(initial: [model.initialState], budget: stepBudget) { states, operation in
                let entry = history[indices[operation]]
                var after: Set<Model.State> = []
                for state in states {
                    after.formUnion(model.successors(of: state, entry.input, entry.output))
                }
                return after.isEmpty ? nil : after
            }
            return Self.conclude(
                outcome, history: history, indices: indices,
                describeOperation: { model.describe($0.input, $0.output) },
                describeState: { states in
                    let each = states.map { model.describe($0) }.sorted()
                    return each.count == 1 ? each[0] : "one of {\(each.joined(separator: ", "))}"
                })
        }
    }

    /// Checks a whole history as one object.
    ///
    /// - Parameter history: The completed operations, in any order.
    /// - Returns: The verdict; a violation's `partition` is nil.
    /// - Complexity: Exponential in the number of overlapping operations at worst; bounded by
    ///   ``stepBudget``.
    public func check(_ history: [HistoryEntry<Input, Output>]) -> LinearizabilityVerdict {
        switch searchPartition(history, Array(history.indices)) {
        case .linearizable: .linearizable
        case .violation(let violation): .notLinearizable(violation)
        case .exhausted: .undecided(partitions: [nil], stepBudget: stepBudget)
        }
    }

    /// Checks a history of independent objects, one sub-history per key, each against a fresh
    /// model (P-compositionality: the history is linearizable exactly when every sub-history
    /// is).
    ///
    /// - Parameters:
    ///   - history: The completed operations, in any order.
    ///   - key: The object an operation acts on, such as a cache key.
    /// - Returns: The first violation, by the partitions' first operation in `history`;
    ///   otherwise ``LinearizabilityVerdict/undecided(partitions:stepBudget:)`` if any partition
    ///   ran out of steps; otherwise ``LinearizabilityVerdict/linearizable``.
    public func check<Key: Hashable>(
        _ history: [HistoryEntry<Input, Output>], partitionedBy key: (Input) -> Key
    ) -> LinearizabilityVerdict {
        var keys: [Key] = []
        var partitions: [Key: [Int]] = [:]
        for (index, entry) in history.enumerated() {
            let partitionKey = key(entry.input)
            if partitions[partitionKey] == nil { keys.append(partitionKey) }
            partitions[partitionKey, default: []].append(index)
        }
        var undecided: [String?] = []
        for partitionKey in keys {
            switch searchPartition(history, partitions[partitionKey]!) {
            case .linearizable:
                continue
            case .violation(var violation):
                violation.partition = String(describing: partitionKey)
                return .notLinearizable(violation)
            case .exhausted:
                undecided.append(String(describing: partitionKey))
            }
        }
        return undecided.isEmpty ? .linearizable : .undecided(partitions: undecided, stepBudget: stepBudget)
    }

    private static func conclude<State>(
        _ outcome: LinearizationSearch<State>.Outcome, history: [HistoryEntry<Input, Output>], indices: [Int],
        describeOperation: (HistoryEntry<Input, Output>) -> String, describeState: (State) -> String
    ) -> PartitionOutcome {
        switch outcome {
        case .linearizable:
            return .linearizable
        case .exhausted:
            return .exhausted
        case .violation(let deadEnd, _):
            func describe(_ operation: Int) -> String {
                let index = indices[operation]
                let entry = history[index]
                return "#\(index) thread \(entry.thread): \(describeOperation(entry)) "
                    + "[\(entry.invocation)–\(entry.response)]"
            }
            return .violation(
                LinearizabilityViolation(
                    partition: nil, operationCount: indices.count, linearizedCount: deadEnd.order.count,
                    linearizedTail: deadEnd.order.suffix(tailLength).map(describe),
                    state: describeState(deadEnd.state), blockedOperation: describe(deadEnd.blocked),
                    overlappingOperations: deadEnd.candidates.map(describe)))
        }
    }
}
