import Dispatch

/// A linearizability check of your own thread-safe type: it runs rounds of a few operations on
/// a fresh object from several threads released together, records when each operation started
/// and returned, and asks whether some one-at-a-time order of them, respecting real time, gives
/// the outputs your sequential model allows. A type whose every accessor is locked but whose
/// `count += 1` is two critical sections fails it; the Thread Sanitizer sees no race there.
///
/// ```swift
/// struct CounterModel: SequentialModel {
///     enum Operation: Sendable { case increment, read }
///     var initialState: Int { 0 }
///     func step(_ count: Int, _ operation: Operation, _ output: Int) -> Int? {
///         switch operation {
///         case .increment: output == count + 1 ? output : nil
///         case .read: output == count ? count : nil
///         }
///     }
/// }
///
/// @Test func counterIsLinearizable() {
///     LinearizabilityCheck(
///         model: CounterModel(), operations: [.increment, .read],
///         make: { Counter() },
///         perform: { counter, operation in
///             switch operation {
///             case .increment: counter.increment()
///             case .read: counter.value
///             }
///         }
///     ).expectLinearizable()
/// }
/// ```
///
/// A failure names the round's seed: `run(seed:)` with it runs the same operations first. Real
/// threads interleave as the machine lets them, so a replay finds the bug again quickly but not
/// in the same round; for code with `await`s, ``AsyncLinearizabilityCheck``'s deterministic
/// scheduler replays an interleaving exactly.
///
/// Races are found when the threads really run at once. On a machine busy with other work (the
/// tests around the check, run in parallel) they take turns on the cores and overlap less, so
/// the same budget finds less: put checks in a `.serialized` suite, and run the suite alone in
/// CI (`swift test --no-parallel`).
///
/// Operations should return: one that has not returned when the budget's time runs out (a lost
/// wake-up, a deadlock) fails the check as a hang, naming it and its thread. That thread is
/// left where it is stuck.
///
/// Thread safety: a check is run from one thread at a time; `make` runs on that thread,
/// `perform` on the round's threads.
public struct LinearizabilityCheck<Object: Sendable, Input: Sendable, Output: Sendable> {
    /// Threads per round.
    public let threads: Int
    /// Operations each thread runs per round.
    public let operationsPerThread: Int
    private let operations: CheckOperations<Input>
    private let makeChecker: @Sendable () -> LinearizabilityChecker<Input, Output>
    private let describe: @Sendable (Input, Output) -> String
    private let make: () -> Object
    private let perform: @Sendable (Object, Input) -> Output

    /// A check of the objects `make` returns against `model`.
    ///
    /// - Parameters:
    ///   - model: What each operation may return, one at a time.
    ///   - threads: Threads per round. Two finds most bugs fastest; more than the machine's
    ///     cores overlap less.
    ///   - operationsPerThread: Operations each thread draws per round. Rounds of a dozen
    ///     operations or fewer are checked in microseconds and read easily in a report.
    ///   - operations: What the threads draw from.
    ///   - make: A fresh object, for each round.
    ///   - perform: Runs one operation on the object and returns its output.
    public init<Model: SequentialModel & Sendable>(
        model: Model, threads: Int = 2, operationsPerThread: Int = 4, operations: CheckOperations<Input>,
        make: @escaping () -> Object, perform: @escaping @Sendable (Object, Input) -> Output
    ) where Model.Input == Input, Model.Output == Output {
        self.init(
            threads: threads, operationsPerThread: operationsPerThread, operations: operations,
            makeChecker: { LinearizabilityChecker(model: model) }, describe: { model.describe($0, $1) }, make: make,
            perform: perform)
    }

    /// A check against a model whose operations may lead to one of several states.
    ///
    /// - Parameters: As for the initializer with a ``SequentialModel``.
    public init<Model: NondeterministicModel & Sendable>(
        model: Model, threads: Int = 2, operationsPerThread: Int = 4, operations: CheckOperations<Input>,
        make: @escaping () -> Object, perform: @escaping @Sendable (Object, Input) -> Output
    ) where Model.Input == Input, Model.Output == Output {
        self.init(
            threads: threads, operationsPerThread: operationsPerThread, operations: operations,
            makeChecker: { LinearizabilityChecker(model: model) }, describe: { model.describe($0, $1) }, make: make,
            perform: perform)
    }

    private init(
        threads: Int, operationsPerThread: Int, operations: CheckOperations<Input>,
        makeChecker: @escaping @Sendable () -> LinearizabilityChecker<Input, Output>,
        describe: @escaping @Sendable (Input, Output) -> String, make: @escaping () -> Object,
        perform: @escaping @Sendable (Object, Input) -> Output
    ) {
        self.threads = threads
        self.operationsPerThread = operationsPerThread
        self.operations = operations
        self.makeChecker = makeChecker
        self.describe = describe
        self.make = make
        self.perform = perform
    }

    /// Runs rounds until one fails or the budget is spent, and says what it found.
    ///
    /// Blocks the calling thread for up to the budget's time.
    ///
    /// - Parameters:
    ///   - budget: How many rounds, and how long, at most.
    ///   - seed: The first round's seed; nil for a fresh one (the report names it).
    /// - Returns: The report: passed, or the failing history, shrunk, with the seed that
    ///   replays it.
    /// - Throws: ``LinearizabilityCheckError`` for a check that cannot run: no operations, an
    ///   empty budget, no threads, or a model that rejects the object's operations even one at
    ///   a time.
    public func run(budget: CheckBudget = .default, seed: UInt64? = nil) throws(LinearizabilityCheckError)
        -> LinearizabilityReport
    {
        let engine = CheckEngine(
            threads: threads, operationsPerThread: operationsPerThread, operations: operations,
            checker: makeChecker(), describe: describe)
        guard threads >= 1 else {
            throw .invalidShape(threads: threads, operationsPerThread: operationsPerThread)
        }
        let team = WorkerTeam(count: threads)
        defer { team.dismiss() }
        let perform = perform
        return try engine.run(budget: budget, seed: seed) { scenario, seed, deadline in
            let object = make()
            let clock = LogicalClock()
            let records = scenario.threads.indices.map { RoundRecord<Input, Output>(thread: $0) }
            // The delays before operations spread over 64 pauses in half the rounds, and over
            // 1 to 32 in the others: a window a few instructions wide between two critical
            // sections is hit when the threads start a few nanoseconds apart, which wide
            // spreads rarely give.
            let spread: UInt64 = seed % 2 == 0 ? 64 : 1 << (seed / 2 % 6)
            let finished = team.run(until: deadline) { index in
                guard index < scenario.threads.count else { return }
                var random = SeededGenerator(seed: seed &+ UInt64(index) &* 0x9E37_79B9_7F4A_7C15)
                let record = records[index]
                for input in scenario.threads[index] {
                    spinDelay(Int(random.next() % spread))
                    record.begin(input, at: clock.tick())
                    let output = perform(object, input)
                    record.end(output, at: clock.tick())
                }
            }
            if !finished { Stranded.keep(object) }
            return RoundRecord.outcome(of: records, scenario: scenario, finished: finished, clock: clock)
        }
    }
}
