import BatonTesting

/// The stress run shared by `Protected` and the three locks: threads increment and read a
/// ``GuardedCounter`` in rounds.
///
/// Each round has a burst, at full speed and unrecorded, in which readers check that both
/// fields agree; then, with every thread stopped, an exact count (no increment lost); then a
/// recorded phase of `roundOperations` operations whose history must be linearizable against a
/// counter starting at the exact count; then the exact count again.
enum CounterStress {
    /// Operations per thread in a burst.
    static var burstOperations: Int { 2_000 }

    static func run(name: String, options: StressOptions, counter: some GuardedCounter) -> StressResult {
        let session = StressSession(name: name, options: options)
        let perThread = max(1, options.roundOperations / options.threads)
        var expected = 0
        var round = 0
        while session.shouldContinue {
            round += 1
            let currentRound = round
            let increments = session.team("\(name) round \(round) burst") { _ in
                burst(counter, session: session, round: currentRound)
            }
            guard let increments else { break }
            expected += increments.reduce(0, +)
            guard audit(counter, expected: expected, session: session, when: "after burst \(round)") else { break }

            let clock = LogicalClock()
            let logs = session.team("\(name) round \(round) recorded") { thread in
                recordedPhase(counter, clock: clock, thread: thread, operations: perThread, session: session)
            }
            guard let logs else { break }
            let history = logs.flatMap(\.entries)
            let checker = LinearizabilityChecker(model: CounterModel(initialValue: expected))
            session.record(checker.check(history), round: round)
            expected += history.count { $0.input == .increment }
            guard audit(counter, expected: expected, session: session, when: "after round \(round)") else { break }
        }
        return session.result()
    }

    /// Unrecorded increments and reads until the burst is done or time is up; returns the
    /// increments made.
    private static func burst(_ counter: some GuardedCounter, session: StressSession, round: Int) -> Int {
        var random = SeededGenerator.fresh()
        var increments = 0
        var operations = 0
        for index in 0..<burstOperations {
            if index & 255 == 0 && session.isPastDeadline { break }
            operations += 1
            if random.chance(60) {
                _ = counter.increment()
                increments += 1
            } else {
                let fields = counter.read(trying: random.chance(20))
                if fields.first != fields.second {
                    session.violations.report(
                        "round \(round): a reader saw a half-done write: first = \(fields.first), "
                            + "second = \(fields.second)")
                }
            }
        }
        session.countOperations(operations)
        return increments
    }

    private static func recordedPhase(
        _ counter: some GuardedCounter, clock: LogicalClock, thread: Int, operations: Int, session: StressSession
    ) -> HistoryLog<CounterModel.Operation, Int> {
        var random = SeededGenerator.fresh()
        var log = HistoryLog<CounterModel.Operation, Int>(clock: clock, thread: thread)
        for _ in 0..<operations {
            if random.chance(50) {
                log.record(.increment) { counter.increment() }
            } else {
                let trying = random.chance(20)
                var fields = (first: 0, second: 0)
                // The history records the first field; a torn pair is reported on its own.
                log.record(.read) {
                    fields = counter.read(trying: trying)
                    return fields.first
                }
                if fields.first != fields.second {
                    session.violations.report(
                        "a reader saw a half-done write: first = \(fields.first), second = \(fields.second)")
                }
            }
        }
        session.countOperations(operations)
        return log
    }

    /// Checks, with every thread stopped, that both fields equal the increments made.
    private static func audit(
        _ counter: some GuardedCounter, expected: Int, session: StressSession, when: String
    ) -> Bool {
        let fields = counter.read(trying: false)
        guard fields.first == expected && fields.second == expected else {
            session.violations.report(
                "\(when): \(expected) increments made, but the counter holds first = \(fields.first), "
                    + "second = \(fields.second)")
            return false
        }
        return true
    }
}
