/// The search shared by ``LinearizabilityCheck`` and ``AsyncLinearizabilityCheck``: rounds of
/// drawn scenarios, each run by a runner (threads, or tasks under a scheduler) and its history
/// checked; a failure shrunk by re-running smaller scenarios; the report.
struct CheckEngine<Input: Sendable, Output: Sendable> {
    /// Runs a scenario once: `seed` drives whatever the runner randomises (delays, the
    /// scheduler's choices); operations still running at `deadline` are left behind.
    typealias Runner = (_ scenario: Scenario<Input>, _ seed: UInt64, _ deadline: ContinuousClock.Instant)
        -> RoundOutcome<Input, Output>

    var threads: Int
    var operationsPerThread: Int
    var operations: CheckOperations<Input>
    var checker: LinearizabilityChecker<Input, Output>
    var describe: (Input, Output) -> String

    /// Replays of one smaller scenario before shrinking gives up on it.
    static var attemptsPerCandidate: Int { 100 }
    /// Sequential rounds run before any concurrent one, to tell a wrong model from a racy object.
    static var sequentialRounds: Int { 3 }

    /// Checks the setup, then runs rounds until one fails or the budget is spent.
    func run(budget: CheckBudget, seed: UInt64?, runner: Runner) throws(LinearizabilityCheckError)
        -> LinearizabilityReport
    {
        let start = ContinuousClock.now
        var report = try search(budget: budget, seed: seed, runner: runner)
        report.elapsed = ContinuousClock.now - start
        return report
    }

    private func search(budget: CheckBudget, seed: UInt64?, runner: Runner) throws(LinearizabilityCheckError)
        -> LinearizabilityReport
    {
        guard !operations.isEmpty else { throw .noOperations }
        guard !budget.isEmpty else { throw .emptyBudget(budget) }
        guard threads >= 1 && operationsPerThread >= 1 else {
            throw .invalidShape(threads: threads, operationsPerThread: operationsPerThread)
        }
        let seed = seed ?? SeededGenerator.fresh().seed
        let clock = ContinuousClock()
        let start = clock.now
        // Rounds start until nine tenths of the time; the last tenth is a running round's grace
        // before it counts as hung.
        let end = start + budget.time
        let searchEnd = start + budget.time / 10 * 9
        var report = LinearizabilityReport(
            outcome: .passed, seed: seed, failingSeed: nil, rounds: 0, budget: budget, threads: threads,
            operationsPerThread: operationsPerThread, operations: [], operationsBeforeShrinking: 0, explanation: nil,
            undecidedRounds: 0, elapsed: .zero)

        var sequentialRandom = SeededGenerator(seed: seed ^ 0x5E0_0E17_1A15)
        for _ in 0..<Self.sequentialRounds {
            let scenario = Scenario.draw(
                threads: 1, perThread: threads * operationsPerThread, from: operations, using: &sequentialRandom)
            let outcome = runner(scenario, sequentialRandom.next(), end)
            if outcome.hung {
                describeHang(outcome, into: &report, seed: seed)
                return report
            }
            if outcome.starved {
                describeStarvation(into: &report)
                return report
            }
            if case .notLinearizable = checker.check(outcome.history) {
                var rejected = report
                describeFailure(outcome.history, before: scenario.operationCount, into: &rejected, seed: seed)
                rejected.rounds = 0
                rejected.failingSeed = nil
                rejected.elapsed = clock.now - start
                throw .sequentialRunRejected(rejected)
            }
        }

        var roundSeeds = SeededGenerator(seed: seed)
        var roundSeed = seed
        while budget.rounds.map({ report.rounds < $0 }) ?? true, clock.now < searchEnd {
            report.rounds += 1
            var random = SeededGenerator(seed: roundSeed)
            let scenario = Scenario.draw(
                threads: threads, perThread: operationsPerThread, from: operations, using: &random)
            let outcome = runner(scenario, random.next(), end)
            if outcome.hung {
                describeHang(outcome, into: &report, seed: roundSeed)
                return report
            }
            if outcome.starved {
                describeStarvation(into: &report)
                return report
            }
            switch checker.check(outcome.history) {
            case .linearizable:
                break
            case .undecided:
                report.undecidedRounds += 1
            case .notLinearizable:
                let shrunk = shrink(scenario, random: &random, until: searchEnd, deadline: end, runner: runner)
                if let shrunk, shrunk.hung {
                    describeHang(shrunk, into: &report, seed: roundSeed)
                    return report
                }
                describeFailure(
                    shrunk?.history ?? outcome.history, before: scenario.operationCount, into: &report,
                    seed: roundSeed)
                return report
            }
            roundSeed = roundSeeds.next()
        }
        if report.undecidedRounds > 0 { report.outcome = .undecided }
        return report
    }

    /// Re-runs ever smaller scenarios while one still fails; returns the failing outcome of the
    /// smallest that did (nil if no smaller one failed), or a hung outcome met on the way.
    private func shrink(
        _ scenario: Scenario<Input>, random: inout SeededGenerator, until searchEnd: ContinuousClock.Instant,
        deadline: ContinuousClock.Instant, runner: Runner
    ) -> RoundOutcome<Input, Output>? {
        let clock = ContinuousClock()
        var smallest = scenario
        var failing: RoundOutcome<Input, Output>?
        search: while clock.now < searchEnd {
            for candidate in smallest.smaller {
                for _ in 0..<Self.attemptsPerCandidate {
                    guard clock.now < searchEnd else { break search }
                    let outcome = runner(candidate, random.next(), deadline)
                    if outcome.hung { return outcome }
                    if outcome.starved { break search }
                    if case .notLinearizable = checker.check(outcome.history) {
                        smallest = candidate
                        failing = outcome
                        continue search
                    }
                }
            }
            break
        }
        return failing
    }

    /// Fills `report` with a failing history, sorted by invocation so that the checker's
    /// explanation numbers the operations as the listing does.
    private func describeFailure(
        _ history: [HistoryEntry<Input, Output>], before: Int, into report: inout LinearizabilityReport,
        seed: UInt64
    ) {
        let sorted = history.sorted { ($0.invocation, $0.thread) < ($1.invocation, $1.thread) }
        report.outcome = .notLinearizable
        report.failingSeed = seed
        report.operationsBeforeShrinking = before
        report.operations = sorted.map(reported)
        report.explanation = checker.check(sorted).violation?.description
    }

    private func describeStarvation(into report: inout LinearizabilityReport) {
        report.outcome = .undecided
        report.undecidedRounds += 1
        report.explanation =
            "round \(report.rounds) did not finish: no operation hung, but some had not started when the budget's "
            + "time ran out (were the tasks waiting for a thread of a busy cooperative pool?)"
    }

    private func describeHang(
        _ outcome: RoundOutcome<Input, Output>, into report: inout LinearizabilityReport, seed: UInt64
    ) {
        report.outcome = .hung
        report.failingSeed = seed
        var operations = outcome.history.map(reported)
        operations += outcome.inside.map {
            ReportedOperation(
                thread: $0.thread, text: String(describing: $0.input) + ($0.started ? "" : " (not started)"),
                output: nil, invocation: $0.invocation, response: nil)
        }
        report.operations = operations.sorted { ($0.invocation, $0.thread) < ($1.invocation, $1.thread) }
        report.operationsBeforeShrinking = report.operations.count
    }

    /// A returned operation as the report lists it.
    private func reported(_ entry: HistoryEntry<Input, Output>) -> ReportedOperation {
        ReportedOperation(
            thread: entry.thread, text: describe(entry.input, entry.output), output: String(describing: entry.output),
            invocation: entry.invocation, response: entry.response)
    }
}
