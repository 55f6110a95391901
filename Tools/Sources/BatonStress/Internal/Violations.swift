import BatonLocks

/// The violations a run found, reported from any of its threads: every one is counted, the
/// first few are kept with their descriptions.
final class Violations: Sendable {
    private struct State {
        var count = 0
        var kept: [String] = []
    }

    /// How many descriptions to keep; a broken structure repeats itself.
    static var keptLimit: Int { 10 }

    private let state = Protected(State())

    /// Records a violation.
    func report(_ description: String) {
        state.write { state in
            state.count += 1
            if state.kept.count < Self.keptLimit { state.kept.append(description) }
        }
    }

    /// How many violations were reported.
    var count: Int { state.read { $0.count } }

    /// The first descriptions reported.
    var descriptions: [String] { state.read { $0.kept } }

    /// Whether the run has seen enough to stop early.
    var isFull: Bool { count >= Self.keptLimit }
}
