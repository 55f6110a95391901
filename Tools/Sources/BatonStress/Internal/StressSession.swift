import BatonLocks
import BatonTesting

/// The bookkeeping of one stress run: its deadline, its counts and the violations its threads
/// report.
final class StressSession: Sendable {
    let name: String
    let options: StressOptions
    let start: ContinuousClock.Instant
    let deadline: ContinuousClock.Instant
    let violations = Violations()
    private let counts = Protected(Counts())

    private struct Counts {
        var operations = 0
        var histories = 0
        var undecided = 0
    }

    init(name: String, options: StressOptions) {
        self.name = name
        self.options = options
        start = .now
        deadline = start + options.duration
    }

    /// Whether the run should start another round: time is left and it has not already found
    /// enough violations to make its point.
    var shouldContinue: Bool {
        ContinuousClock.now < deadline && !violations.isFull
    }

    /// Whether the time budget has run out (checked by threads inside long loops).
    var isPastDeadline: Bool { ContinuousClock.now >= deadline }

    func countOperations(_ count: Int) {
        counts.write { $0.operations += count }
    }

    func countHistory(undecided: Bool = false) {
        counts.write {
            $0.histories += 1
            if undecided { $0.undecided += 1 }
        }
    }

    /// Counts a checked history, and reports its violation if it has one.
    func record(_ verdict: LinearizabilityVerdict, round: Int) {
        countHistory(undecided: verdict.isUndecided)
        if let violation = verdict.violation {
            violations.report("round \(round): \(violation)")
        }
    }

    /// Runs a team of `options.threads` threads; reports a hang and returns nil if they do not
    /// all finish within the hang timeout.
    func team<Result: Sendable>(_ what: String, _ body: @escaping @Sendable (Int) -> Result) -> [Result]? {
        let results = ThreadTeam.run(threads: options.threads, timeout: options.hangTimeout, body)
        if results == nil {
            violations.report("hang: \(what) did not finish within \(options.hangTimeout)")
        }
        return results
    }

    func result() -> StressResult {
        let counts = counts.value
        return StressResult(
            name: name, threads: options.threads, operations: counts.operations, historiesChecked: counts.histories,
            undecidedHistories: counts.undecided, violationCount: violations.count,
            violations: violations.descriptions, elapsed: .now - start)
    }
}
