import BatonFutures
import BatonLocks
import BatonTesting

/// The futures stress run: threads race to complete the same futures while observers register
/// before, during and after completion.
///
/// Each round makes `plainFutures` futures, each raced by every thread with a `tryComplete`
/// (success or failure, chosen at random) or, on some futures, a `cancel()`; and
/// `combinedGroups` groups of three raced futures under `Future.all` and `zip`. Every thread also
/// registers observers and reads `result` as it goes. With the threads stopped, every future
/// must have completed exactly once: exactly one racing completion won (or a cancel did), every
/// observer — registered before or after — saw that outcome exactly once, every read of
/// `result` saw it or nothing, a `map` of it saw it mapped, and `all`/`zip` agree with their
/// inputs' outcomes.
enum FutureStress {
    static var plainFutures: Int { 24 }
    static var combinedGroups: Int { 6 }

    static func run(_ options: StressOptions) -> StressResult {
        let session = StressSession(name: "futures", options: options)
        var round = 0
        while session.shouldContinue {
            round += 1
            let plain = (0..<plainFutures).map { index in
                Subject(label: "future \(index)", cancellable: index % 4 == 0)
            }
            let groups = (0..<combinedGroups).map { group in
                (0..<3).map { Subject(label: "group \(group) input \($0)", cancellable: false) }
            }
            let raced = plain + groups.flatMap { $0 }
            let combined = groups.map(Combined.init)
            let currentRound = round
            let operations = session.team("futures round \(round)") { thread in
                var random = SeededGenerator.fresh()
                var operations = 0
                for subject in raced.shuffled(using: &random) {
                    operations += subject.race(thread: thread, round: currentRound, using: &random)
                }
                return operations
            }
            guard let operations else { break }
            session.countOperations(operations.reduce(0, +))
            for subject in raced {
                subject.observe(as: "after")
                subject.audit(session: session, round: round, hangTimeout: options.hangTimeout)
                session.countHistory()
            }
            for group in combined {
                group.audit(session: session, round: round, hangTimeout: options.hangTimeout)
                session.countHistory()
            }
        }
        return session.result()
    }

    /// An outcome in a form that compares: a value, a failure naming the completer, or a
    /// cancellation.
    enum Outcome: Hashable, Sendable, CustomStringConvertible {
        case value(Int)
        case failure(String)
        case cancelled

        init(_ result: Result<Int, any Error>) {
            switch result {
            case .success(let value): self = .value(value)
            case .failure(let error as RacingFailure): self = .failure(error.description)
            case .failure(is CancellationError): self = .cancelled
            case .failure(let error): self = .failure("unexpected error \(error)")
            }
        }

        var description: String {
            switch self {
            case .value(let value): "value \(value)"
            case .failure(let error): "failure (\(error))"
            case .cancelled: "cancelled"
            }
        }
    }

    /// The error a racing thread fails a future with.
    struct RacingFailure: Error, CustomStringConvertible {
        var thread: Int
        var round: Int
        var description: String { "thread \(thread) in round \(round)" }
    }

    /// One raced future and everything seen of it.
    final class Subject: Sendable {
        let label: String
        let promise = Promise<Int>()
        /// Whether threads may cancel it instead of completing it.
        let cancellable: Bool
        let mapped: Future<Int>
        private let seen = Protected(Seen())

        struct Seen {
            /// The outcomes each observer received, by observer name.
            var observed: [String: [Outcome]] = [:]
            /// The outcomes of the `tryComplete` calls that returned true.
            var winners: [Outcome] = []
            var cancels = 0
            /// Every non-nil `result` a thread read.
            var reads: Set<Outcome> = []
        }

        var future: Future<Int> { promise.future }

        init(label: String, cancellable: Bool) {
            self.label = label
            self.cancellable = cancellable
            mapped = promise.future.map { $0 + 1 }
            observe(as: "before")
        }

        /// Registers an observer that logs what it receives.
        func observe(as name: String) {
            seen.write { $0.observed[name] = [] }
            future.whenComplete { [seen] result in
                seen.write { $0.observed[name, default: []].append(Outcome(result)) }
            }
        }

        /// One thread's turn: maybe observe, then complete or cancel, then maybe read the result.
        /// Returns the operations done.
        func race(thread: Int, round: Int, using random: inout SeededGenerator) -> Int {
            var operations = 1
            if random.chance(50) {
                observe(as: "thread \(thread) early")
                operations += 1
            }
            if cancellable && random.chance(25) {
                future.cancel()
                seen.write { $0.cancels += 1 }
            } else {
                let result: Result<Int, any Error> =
                    random.chance(70)
                    ? .success(thread * 1_000 + round) : .failure(RacingFailure(thread: thread, round: round))
                if promise.tryComplete(with: result) {
                    seen.write { $0.winners.append(Outcome(result)) }
                }
            }
            if random.chance(50) {
                observe(as: "thread \(thread) late")
                operations += 1
            }
            if let result = future.result {
                seen.write { _ = $0.reads.insert(Outcome(result)) }
                operations += 1
            }
            return operations
        }

        /// The final outcome; nil (and a reported hang) if the future never completes.
        func outcome(session: StressSession, round: Int, hangTimeout: Duration) -> Outcome? {
            guard let result = waitForResult(future, hangTimeout: hangTimeout) else {
                session.violations.report("round \(round), \(label): still pending after every racer returned")
                return nil
            }
            return Outcome(result)
        }

        func audit(session: StressSession, round: Int, hangTimeout: Duration) {
            guard let outcome = outcome(session: session, round: round, hangTimeout: hangTimeout) else { return }
            let seen = seen.value
            func report(_ problem: String) {
                session.violations.report("round \(round), \(label) (outcome: \(outcome)): \(problem)")
            }
            switch (seen.winners.count, outcome) {
            case (0, .cancelled) where seen.cancels > 0 || !cancellable:
                // Cancelled by a racer, or (a combined input) by `all`/`zip` after a sibling failed.
                break
            case (1, _) where seen.winners[0] == outcome:
                break
            default:
                report(
                    "\(seen.winners.count) racing completions won (\(seen.winners)), \(seen.cancels) cancels")
            }
            for (observer, received) in seen.observed.sorted(by: { $0.key < $1.key }) where received != [outcome] {
                report("observer '\(observer)' received \(received) instead of exactly one \(outcome)")
            }
            if let stray = seen.reads.first(where: { $0 != outcome }) {
                report("a thread read result \(stray)")
            }
            if let mappedResult = waitForResult(mapped, hangTimeout: hangTimeout) {
                let expected: Outcome = if case .value(let value) = outcome { .value(value + 1) } else { outcome }
                if Outcome(mappedResult) != expected {
                    report("its map(+1) completed with \(Outcome(mappedResult)), expected \(expected)")
                }
            } else {
                report("its map(+1) never completed")
            }
        }
    }

    /// `Future.all` and `zip` over the three raced futures of a group, made before the race,
    /// and another `all` made after it.
    final class Combined: Sendable {
        let inputs: [Subject]
        let all: Future<[Int]>
        let pair: Future<(Int, Int)>
        private let observed = Protected([Outcome]())

        init(_ inputs: [Subject]) {
            self.inputs = inputs
            all = Future.all(inputs.map(\.future))
            pair = zip(inputs[0].future, inputs[1].future)
            all.whenComplete { [observed] result in
                observed.write { $0.append(Outcome(result.map { $0.reduce(0, +) })) }
            }
        }

        func audit(session: StressSession, round: Int, hangTimeout: Duration) {
            let label = inputs[0].label.replacingOccurrences(of: " input 0", with: "")
            func report(_ problem: String) {
                session.violations.report("round \(round), \(label): \(problem)")
            }
            let outcomes = inputs.compactMap { $0.outcome(session: session, round: round, hangTimeout: hangTimeout) }
            guard outcomes.count == inputs.count else { return }
            let late = Future.all(inputs.map(\.future))
            for (name, future, members) in [("all", all, outcomes), ("late all", late, outcomes)] {
                guard let result = waitForResult(future, hangTimeout: hangTimeout) else {
                    report("\(name) never completed though its inputs did")
                    continue
                }
                checkCombination(name, result.map { $0 }, inputs: members, report: report)
            }
            if let result = waitForResult(pair, hangTimeout: hangTimeout) {
                checkCombination("zip", result.map { [$0.0, $0.1] }, inputs: Array(outcomes.prefix(2)), report: report)
            } else {
                report("zip never completed though its inputs did")
            }
            let expectedSum = waitForResult(all, hangTimeout: hangTimeout).map { Outcome($0.map { $0.reduce(0, +) }) }
            if let expectedSum, observed.value != [expectedSum] {
                report("the observer of all received \(observed.value) instead of exactly one \(expectedSum)")
            }
        }

        /// A combination succeeds with its inputs' values exactly when they all succeed, and
        /// otherwise fails with the failure of one of them.
        private func checkCombination(
            _ name: String, _ result: Result<[Int], any Error>, inputs: [Outcome], report: (String) -> Void
        ) {
            let values = inputs.compactMap { if case .value(let value) = $0 { value } else { nil } }
            switch result {
            case .success(let combined):
                if values.count != inputs.count || combined != values {
                    report("\(name) succeeded with \(combined), but its inputs ended \(inputs)")
                }
            case .failure(let error):
                let failure = Outcome(.failure(error))
                if !inputs.contains(failure) {
                    report("\(name) failed with \(failure), which none of its inputs (\(inputs)) did")
                }
            }
        }
    }

    /// The future's result, waiting at most `hangTimeout` for it.
    private static func waitForResult<Value>(_ future: Future<Value>, hangTimeout: Duration)
        -> Result<Value, any Error>?
    {
        if let result = future.result { return result }
        _ = ThreadTeam.wait(timeout: hangTimeout) { _ = try? future.wait() }
        return future.result
    }
}
