/// The search behind ``LinearizabilityChecker``, for one partition of a history: Wing and
/// Gong's backtracking over the operations that may take effect next, with Lowe's memo of
/// every (linearized operations, state) pair already explored, so a configuration reached by
/// two different orders is explored once.
///
/// The events (each operation's invocation and response) sit in a doubly linked list in time
/// order. Walking it from the front, an invocation is a candidate to take effect now; a
/// response whose operation has not taken effect yet is a dead end, since everything invoked
/// before it has been tried: the search undoes its last choice and tries the next candidate.
/// Linearizing an operation unlinks its two events, so the walk restarts at the front.
struct LinearizationSearch<State: Hashable> {
    enum Outcome {
        case linearizable(steps: Int)
        case violation(DeadEnd, steps: Int)
        case exhausted(steps: Int)
    }

    /// The deepest point the search reached before giving up on a branch.
    struct DeadEnd {
        /// The operations linearized, in order.
        var order: [Int]
        /// The state after them.
        var state: State
        /// The operation whose response was reached while it could not take effect.
        var blocked: Int
        /// The other operations that could have taken effect next; none led anywhere new.
        var candidates: [Int]
    }

    /// Sentinel index for "no node".
    private static var none: Int { -1 }

    /// Events in time order; node `count` is the head sentinel.
    private var next: [Int]
    private var previous: [Int]
    /// For each node, its operation.
    private let operation: [Int]
    /// For an invocation node, the node of its response; -1 for a response node.
    private let response: [Int]
    private let head: Int
    private let operationCount: Int

    /// Builds the event list of operations given by their (invocation, response) ticks.
    init(intervals: [(invocation: UInt64, response: UInt64)]) {
        operationCount = intervals.count
        // An invocation sorts before a response at the same tick: equal ticks overlap.
        var events: [(time: UInt64, isResponse: Bool, operation: Int)] = []
        events.reserveCapacity(intervals.count * 2)
        for (index, interval) in intervals.enumerated() {
            events.append((interval.invocation, false, index))
            events.append((interval.response, true, index))
        }
        events.sort { a, b in
            if a.time != b.time { return a.time < b.time }
            if a.isResponse != b.isResponse { return !a.isResponse }
            return a.operation < b.operation
        }
        var operation = Array(repeating: 0, count: events.count)
        var response = Array(repeating: Self.none, count: events.count)
        var invocationNode = Array(repeating: 0, count: intervals.count)
        for (node, event) in events.enumerated() {
            operation[node] = event.operation
            if event.isResponse {
                response[invocationNode[event.operation]] = node
            } else {
                invocationNode[event.operation] = node
            }
        }
        self.operation = operation
        self.response = response
        let count = events.count
        head = count
        next = (0...count).map { $0 + 1 < count ? $0 + 1 : Self.none }
        next[head] = count > 0 ? 0 : Self.none
        previous = (0...count).map { $0 - 1 }
        if count > 0 { previous[0] = head }
        previous[head] = Self.none
    }

    /// Searches for a linearization.
    ///
    /// - Parameters:
    ///   - initial: The model's initial state.
    ///   - budget: The most candidate operations to try before giving up.
    ///   - step: The state after operation `index` in `state`, or nil if it cannot go there.
    mutating func run(initial: State, budget: Int, step: (State, Int) -> State?) -> Outcome {
        var state = initial
        var linearized = OperationSet(capacity: operationCount)
        var memo: Set<Memo> = []
        var choices: [(node: Int, before: State)] = []
        var deepest: DeadEnd?
        var steps = 0
        var cursor = next[head]
        while next[head] != Self.none {
            if response[cursor] != Self.none {
                if steps >= budget { return .exhausted(steps: steps) }
                steps += 1
                let index = operation[cursor]
                if let after = step(state, index) {
                    var grown = linearized
                    grown.insert(index)
                    if memo.insert(Memo(linearized: grown, state: after)).inserted {
                        choices.append((cursor, state))
                        state = after
                        linearized = grown
                        lift(cursor)
                        cursor = next[head]
                        continue
                    }
                }
                cursor = next[cursor]
            } else {
                if choices.count > deepest?.order.count ?? -1 {
                    deepest = deadEnd(at: cursor, state: state, choices: choices)
                }
                guard let (node, before) = choices.popLast() else {
                    return .violation(deepest!, steps: steps)
                }
                unlift(node)
                linearized.remove(operation[node])
                state = before
                cursor = next[node]
            }
        }
        return .linearizable(steps: steps)
    }

    private func deadEnd(at blockingNode: Int, state: State, choices: [(node: Int, before: State)]) -> DeadEnd {
        var candidates: [Int] = []
        var node = next[head]
        while node != blockingNode {
            if response[node] != Self.none && operation[node] != operation[blockingNode] {
                candidates.append(operation[node])
            }
            node = next[node]
        }
        return DeadEnd(
            order: choices.map { operation[$0.node] }, state: state, blocked: operation[blockingNode],
            candidates: candidates)
    }

    /// Unlinks an invocation node and its response.
    private mutating func lift(_ node: Int) {
        unlink(node)
        unlink(response[node])
    }

    /// Links back an invocation node and its response, in the reverse order of `lift`.
    private mutating func unlift(_ node: Int) {
        relink(response[node])
        relink(node)
    }

    private mutating func unlink(_ node: Int) {
        next[previous[node]] = next[node]
        if next[node] != Self.none { previous[next[node]] = previous[node] }
    }

    private mutating func relink(_ node: Int) {
        next[previous[node]] = node
        if next[node] != Self.none { previous[next[node]] = node }
    }

    private struct Memo: Hashable {
        var linearized: OperationSet
        var state: State
    }
}
