import Atomics
import BatonInternals
import Dispatch

/// A linearizability check of async code: an actor's methods, an async API. Each round runs a
/// few operations on a fresh object from several tasks and checks the history against your
/// sequential model, as ``LinearizabilityCheck`` does with threads.
///
/// By default the tasks run under a deterministic scheduler (``CheckScheduling/deterministic``):
/// a serial executor that, at each suspension point, lets the seed choose which task goes on.
/// That is where an actor's "check, await, update" interleaves with another call (actor
/// re-entrancy), and each seed is one interleaving, replayed exactly by `run(seed:)`.
///
/// ```swift
/// @Test func imageCacheLoadsOnce() async {
///     await AsyncLinearizabilityCheck(
///         model: SingleLoadModel(), operations: [.image("a"), .image("b")],
///         make: { ImageCache(loader: CountingLoader()) },
///         perform: { cache, operation in
///             switch operation {
///             case .image(let name): await cache.image(named: name)
///             }
///         }
///     ).expectLinearizable()
/// }
/// ```
///
/// An operation that never returns (a continuation never resumed) fails the check as a hang
/// once the budget's time runs out, naming it and its task.
///
/// Thread safety: a check is run from one task at a time; `make` and the rounds run on a thread
/// of the check's own.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
public struct AsyncLinearizabilityCheck<Object: Sendable, Input: Sendable, Output: Sendable>: Sendable {
    /// Tasks per round.
    public let tasks: Int
    /// Operations each task runs per round.
    public let operationsPerTask: Int
    /// How the tasks are scheduled.
    public let scheduling: CheckScheduling
    private let operations: CheckOperations<Input>
    private let makeChecker: @Sendable () -> LinearizabilityChecker<Input, Output>
    private let describe: @Sendable (Input, Output) -> String
    private let make: @Sendable () -> Object
    private let perform: @Sendable (Object, Input) async -> Output

    /// A check of the objects `make` returns against `model`.
    ///
    /// - Parameters:
    ///   - model: What each operation may return, one at a time.
    ///   - tasks: Tasks per round.
    ///   - operationsPerTask: Operations each task draws per round.
    ///   - scheduling: A seeded serial scheduler (the default), or the global executor.
    ///   - operations: What the tasks draw from.
    ///   - make: A fresh object, for each round.
    ///   - perform: Runs one operation on the object and returns its output.
    public init<Model: SequentialModel & Sendable>(
        model: Model, tasks: Int = 2, operationsPerTask: Int = 4, scheduling: CheckScheduling = .deterministic,
        operations: CheckOperations<Input>, make: @escaping @Sendable () -> Object,
        perform: @escaping @Sendable (Object, Input) async -> Output
    ) where Model.Input == Input, Model.Output == Output {
        self.init(
            tasks: tasks, operationsPerTask: operationsPerTask, scheduling: scheduling, operations: operations,
            makeChecker: { LinearizabilityChecker(model: model) }, describe: { model.describe($0, $1) }, make: make,
            perform: perform)
    }

    /// A check against a model whose operations may lead to one of several states.
    ///
    /// - Parameters: As for the initializer with a ``SequentialModel``.
    public init<Model: NondeterministicModel & Sendable>(
        model: Model, tasks: Int = 2, operationsPerTask: Int = 4, scheduling: CheckScheduling = .deterministic,
        operations: CheckOperations<Input>, make: @escaping @Sendable () -> Object,
        perform: @escaping @Sendable (Object, Input) async -> Output
    ) where Model.Input == Input, Model.Output == Output {
        self.init(
            tasks: tasks, operationsPerTask: operationsPerTask, scheduling: scheduling, operations: operations,
            makeChecker: { LinearizabilityChecker(model: model) }, describe: { model.describe($0, $1) }, make: make,
            perform: perform)
    }

    private init(
        tasks: Int, operationsPerTask: Int, scheduling: CheckScheduling, operations: CheckOperations<Input>,
        makeChecker: @escaping @Sendable () -> LinearizabilityChecker<Input, Output>,
        describe: @escaping @Sendable (Input, Output) -> String, make: @escaping @Sendable () -> Object,
        perform: @escaping @Sendable (Object, Input) async -> Output
    ) {
        self.tasks = tasks
        self.operationsPerTask = operationsPerTask
        self.scheduling = scheduling
        self.operations = operations
        self.makeChecker = makeChecker
        self.describe = describe
        self.make = make
        self.perform = perform
    }

    /// Runs rounds until one fails or the budget is spent, and says what it found.
    ///
    /// The rounds run on a thread of the check's own, so the caller's task only waits.
    ///
    /// - Parameters:
    ///   - budget: How many rounds, and how long, at most.
    ///   - seed: The first round's seed; nil for a fresh one (the report names it).
    /// - Returns: The report: passed, or the failing history, shrunk, with the seed that
    ///   replays it.
    /// - Throws: ``LinearizabilityCheckError`` for a check that cannot run: no operations, an
    ///   empty budget, no tasks, or a model that rejects the object's operations even one at a
    ///   time.
    public func run(budget: CheckBudget = .default, seed: UInt64? = nil) async throws(LinearizabilityCheckError)
        -> LinearizabilityReport
    {
        let result: Result<LinearizabilityReport, LinearizabilityCheckError> = await withCheckedContinuation {
            continuation in
            runOnNewThread {
                continuation.resume(
                    returning: Result { () throws(LinearizabilityCheckError) in
                        try runBlocking(budget: budget, seed: seed)
                    })
            }
        }
        return try result.get()
    }

    /// The rounds, on the calling thread.
    private func runBlocking(budget: CheckBudget, seed: UInt64?) throws(LinearizabilityCheckError)
        -> LinearizabilityReport
    {
        let engine = CheckEngine(
            threads: tasks, operationsPerThread: operationsPerTask, operations: operations,
            checker: makeChecker(), describe: describe)
        return try engine.run(budget: budget, seed: seed) { scenario, seed, deadline in
            runRound(scenario, seed: seed, deadline: deadline)
        }
    }

    private func runRound(_ scenario: Scenario<Input>, seed: UInt64, deadline: ContinuousClock.Instant)
        -> RoundOutcome<Input, Output>
    {
        let object = make()
        let clock = LogicalClock()
        let records = scenario.threads.indices.map { RoundRecord<Input, Output>(thread: $0) }
        let perform = perform
        let body: @Sendable (Int) async -> Void = { index in
            let record = records[index]
            for input in scenario.threads[index] {
                record.begin(input, at: clock.tick())
                let output = await perform(object, input)
                record.end(output, at: clock.tick())
            }
        }
        let finished: Bool
        switch scheduling {
        case .deterministic:
            let executor = SeededTaskExecutor()
            let done = ManagedAtomic<Int>(0)
            for index in scenario.threads.indices {
                Task(executorPreference: executor) {
                    await body(index)
                    done.wrappingIncrement(ordering: .releasing)
                }
            }
            var random = SeededGenerator(seed: seed)
            finished = executor.drive(using: &random, until: deadline) {
                done.load(ordering: .acquiring) == scenario.threads.count
            }
        case .concurrent:
            let done = DispatchSemaphore(value: 0)
            for index in scenario.threads.indices {
                Task.detached {
                    await body(index)
                    done.signal()
                }
            }
            finished = scenario.threads.indices.allSatisfy { _ in
                let left = deadline - ContinuousClock.now
                return left > .zero && done.wait(timeout: .now() + left.dispatchInterval) == .success
            }
        }
        if !finished { Stranded.keep(object) }
        return RoundRecord.outcome(of: records, scenario: scenario, finished: finished, clock: clock)
    }
}
