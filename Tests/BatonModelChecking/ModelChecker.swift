#if BATON_MODEL_CHECK && !canImport(Darwin)
import Atomics
@_spi(ModelChecking) import BatonLocks

/// Runs small programs over Baton's real lock and future code under every interleaving of
/// their threads, up to a bound on preemptions, and reports the first schedule that breaks a
/// property.
///
/// Built only with the `ModelChecking` trait, for Baton's own tests: it is a test-support target,
/// part of no product. The lock words' atomics and futex calls go through BatonLocks' seam
/// (`_ScheduledAtomic`, the futex functions), where this checker installs its scheduler: on a
/// word the program watches and a thread the checker runs, each step waits for the scheduler's
/// turn. So
/// exactly one thread runs at a time, between two steps it runs real code, and the scheduler
/// decides every interleaving of the steps. A futex wait parks the thread in the model until a
/// futex wake on its word picks it. A futex wait with a timeout (`Lock`'s timed acquire) parks
/// the same way, but its time may run out at any later step: the scheduler may pick the parked
/// thread, among the others, to return from its wait as timed out. So every point at which a
/// deadline could pass is explored, without modelling the time (the programs give long
/// timeouts, so that the clock never decides).
///
/// The exploration is stateless, as in CHESS: each execution starts the program afresh and
/// follows a schedule; a depth-first search over the choices of thread at each step visits
/// every schedule with at most `preemptionBound` preemptions (switching away from a thread that
/// could go on). A switch forced by a thread parking or finishing costs nothing, so every
/// order of the threads that must wait for one another is explored.
///
/// An execution fails when a program's ``ModelContext/expect(_:_:)`` fails, when every thread
/// left is parked without a timeout (a lost wake-up: nothing is left to wake them), or when it takes more steps
/// than `stepLimit` (a livelock). The report then holds the schedule, step by step.
public struct ModelChecker: Sendable {
    /// At most this many preemptions per execution.
    public var preemptionBound: Int
    /// Stop after this many executions; the report then says the exploration was bounded.
    public var executionLimit: Int
    /// An execution that takes more steps than this fails as a livelock.
    public var stepLimit: Int

    public init(preemptionBound: Int = 2, executionLimit: Int = 200_000, stepLimit: Int = 2_000) {
        precondition(preemptionBound >= 0, "ModelChecker: preemptionBound must not be negative")
        precondition(executionLimit > 0, "ModelChecker: executionLimit must be positive")
        precondition(stepLimit > 0, "ModelChecker: stepLimit must be positive")
        self.preemptionBound = preemptionBound
        self.executionLimit = executionLimit
        self.stepLimit = stepLimit
    }

    /// Explores the program that `define` builds. `define` runs once per execution and must
    /// build fresh objects each time, the same way each time.
    public func check(_ define: (inout ModelProgram) -> Void) -> ModelReport {
        _ = Scheduler.shared
        ModelCheckSeam.checksRunning.wrappingIncrement(ordering: .relaxed)
        defer { ModelCheckSeam.checksRunning.wrappingDecrement(ordering: .relaxed) }
        let started = ContinuousClock.now
        var choices: [Choice] = []
        var executions = 0
        var longest = 0
        while true {
            executions += 1
            let execution = ModelExecution()
            var program = ModelProgram(execution: execution)
            define(&program)
            precondition(!program.threads.isEmpty, "ModelChecker: the program has no threads")
            if let failure = run(program, execution, &choices) {
                return ModelReport(
                    executions: executions, exhausted: false, failure: failure, longestExecution: longest,
                    elapsed: .now - started, preemptionBound: preemptionBound)
            }
            longest = max(longest, execution.schedule.count)
            execution.threads.removeAll()  // they hold the execution; every one has finished
            guard backtrack(&choices) else {
                return ModelReport(
                    executions: executions, exhausted: true, failure: nil, longestExecution: longest,
                    elapsed: .now - started, preemptionBound: preemptionBound)
            }
            if executions == executionLimit {
                return ModelReport(
                    executions: executions, exhausted: false, failure: nil, longestExecution: longest,
                    elapsed: .now - started, preemptionBound: preemptionBound)
            }
        }
    }

    /// A point of the schedule where more than one thread could go.
    struct Choice {
        /// The threads that could take the step; the first is the one taken by default (the
        /// thread that ran last, if it can go on).
        let options: [Int]
        /// What each option costs in preemptions.
        let costs: [Int]
        /// Preemptions spent before this point.
        let spent: Int
        var taken = 0
    }

    /// Runs one execution, following `choices` as far as they go and extending them with
    /// default choices; returns the failure, if any.
    private func run(
        _ program: ModelProgram, _ execution: ModelExecution, _ choices: inout [Choice]
    ) -> ModelFailure? {
        let context = ModelContext(execution: execution)
        execution.start(program.threads, context: context)
        var depth = 0
        var spent = 0
        var last: Int?
        while true {
            let runnable = execution.runnable
            if runnable.isEmpty {
                if execution.threads.allSatisfy(\.finished) { break }
                return failure(.lostWakeUp, lostWakeUpMessage(execution), execution)
            }
            if execution.schedule.count >= stepLimit {
                return failure(
                    .stepLimit, "no end after \(stepLimit) steps (a livelock, or a program too long)",
                    execution)
            }
            let chosen: Int
            if runnable.count == 1 {
                chosen = runnable[0]
            } else {
                if depth == choices.count {
                    var options = runnable
                    if let last, let at = options.firstIndex(of: last) {
                        options.remove(at: at)
                        options.insert(last, at: 0)
                    }
                    let lastCanGoOn = last.map(runnable.contains) ?? false
                    let costs = options.map { lastCanGoOn && $0 != last ? 1 : 0 }
                    choices.append(Choice(options: options, costs: costs, spent: spent))
                } else if Set(choices[depth].options) != Set(runnable) {
                    return failure(
                        .nondeterminism,
                        "the program did not repeat itself: at this point threads \(choices[depth].options.sorted()) "
                            + "could go before, \(runnable) now; a program must build fresh objects and "
                            + "decide only by what its threads see",
                        execution)
                }
                let choice = choices[depth]
                chosen = choice.options[choice.taken]
                spent = choice.spent + choice.costs[choice.taken]
                depth += 1
            }
            last = chosen
            execution.take(execution.threads[chosen])
            if let violation = execution.violations.first {
                return failure(.violation, violation, execution)
            }
        }
        program.atEnd.forEach { $0(context) }
        if let violation = execution.violations.first {
            return failure(.violation, violation, execution)
        }
        return nil
    }

    /// Moves to the next schedule: the deepest choice with an option left within the bound.
    /// Returns `false` when every schedule has been explored.
    private func backtrack(_ choices: inout [Choice]) -> Bool {
        while var choice = choices.popLast() {
            var next = choice.taken + 1
            while next < choice.options.count && choice.spent + choice.costs[next] > preemptionBound {
                next += 1
            }
            if next < choice.options.count {
                choice.taken = next
                choices.append(choice)
                return true
            }
        }
        return false
    }

    private func failure(
        _ kind: ModelFailure.Kind, _ message: String, _ execution: ModelExecution
    ) -> ModelFailure {
        ModelFailure(kind: kind, message: message, schedule: execution.schedule)
    }

    private func lostWakeUpMessage(_ execution: ModelExecution) -> String {
        let parked = execution.threads.filter { $0.parkedOn != nil }.map { thread in
            let word = thread.parkedOn!
            let value = UnsafeAtomic<UInt32>(at: word.assumingMemoryBound(to: UInt32.AtomicRepresentation.self))
                .load(ordering: .relaxed)
            return "T\(thread.index) on \(execution.name(of: word)) (now \(value))"
        }
        return "lost wake-up: every thread left is parked and nothing is left to wake them: "
            + parked.joined(separator: ", ")
    }
}

/// One program for ``ModelChecker``: its threads, the words they share, and the checks made
/// once they have all finished.
public struct ModelProgram {
    let execution: ModelExecution
    var threads: [@Sendable (ModelContext) -> Void] = []
    var atEnd: [(ModelContext) -> Void] = []

    init(execution: ModelExecution) {
        self.execution = execution
    }

    /// Adds a thread; threads are numbered from 0 in the order they are added.
    public mutating func thread(_ body: @escaping @Sendable (ModelContext) -> Void) {
        threads.append(body)
    }

    /// Adds a check to run once every thread has finished.
    public mutating func atEnd(_ check: @escaping (ModelContext) -> Void) {
        atEnd.append(check)
    }

    /// Schedules the steps on this lock's word.
    public mutating func watch(_ lock: Lock, as name: String = "lock") {
        for (word, suffix) in lock.modelCheckWords { watch(word: word, as: name + suffix) }
    }

    /// Schedules the steps on this lock's word.
    public mutating func watch(_ lock: RecursiveLock, as name: String = "recursiveLock") {
        for (word, suffix) in lock.modelCheckWords { watch(word: word, as: name + suffix) }
    }

    /// Schedules the steps on this lock's state word and its writers' wake counter.
    public mutating func watch(_ lock: ReadWriteLock, as name: String = "rwLock") {
        for (word, suffix) in lock.modelCheckWords { watch(word: word, as: name + suffix) }
    }

    /// Schedules the steps on the word at `word` (for the modules above BatonLocks).
    public mutating func watch(word: UnsafeMutableRawPointer, as name: String) {
        execution.watched[word] = name
    }

    /// A lock that this execution's threads use in place of the process-wide locks named
    /// `name` (a module above BatonLocks that guards its objects with shared locks asks the seam
    /// for it), so that no thread outside the check can hold it; it is watched.
    @discardableResult
    public mutating func substituteLock(for name: String) -> Lock {
        if let lock = execution.substituteLocks[name] { return lock }
        let lock = Lock(name: name)
        execution.substituteLocks[name] = lock
        watch(lock, as: name)
        return lock
    }
}

/// What a program's threads and end checks may ask of the checker.
public struct ModelContext: @unchecked Sendable {  // used only by the thread holding the turn
    let execution: ModelExecution

    /// Records a violation if `condition` is false; the check fails with this execution's
    /// schedule.
    public func expect(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { execution.violations.append(message()) }
    }

    /// Whether thread `index` is parked on a futex word that still holds the value it parked
    /// on: it waits, and no wake is under way (a thread that changed the word is about to wake
    /// it, and the lock it waits for may be free meanwhile).
    public func isWaiting(_ index: Int) -> Bool {
        let thread = execution.threads[index]
        guard let word = thread.parkedOn else { return false }
        let value = UnsafeAtomic<UInt32>(at: word.assumingMemoryBound(to: UInt32.AtomicRepresentation.self))
        return value.load(ordering: .relaxed) == thread.parkedExpecting
    }

    /// A step of its own in the calling thread, where another thread may run: for a program
    /// that holds a lock across a point others should be able to see.
    public func pause(_ name: String = "pauses") {
        programThread("pause(_:)").arrive(.pause(name))
    }

    /// A futex wait for a program's own protocol (a lock written in a test, on a watched word):
    /// parks the calling thread in the model while `word` holds `expected`, until a
    /// ``futexWake(_:_:)`` on it picks the thread.
    public func futexWait(_ word: UnsafeMutableRawPointer, _ expected: UInt32) {
        programThread("futexWait(_:_:)").futexWait(word, expected)
    }

    /// Wakes up to `count` threads parked on `word` by ``futexWait(_:_:)``, the longest parked
    /// first; returns how many it woke.
    @discardableResult
    public func futexWake(_ word: UnsafeMutableRawPointer, _ count: Int32) -> Int32 {
        programThread("futexWake(_:_:)").futexWake(word, count)
    }

    private func programThread(_ caller: String) -> ModelThread {
        guard let thread = ModelThread.current, thread.execution === execution else {
            preconditionFailure("ModelContext.\(caller) called outside the program's threads")
        }
        return thread
    }

    /// Adds a line to the schedule, for a failure's report.
    public func note(_ text: String) {
        execution.schedule.append("   \(text)")
    }
}

/// The result of a check.
public struct ModelReport: Sendable, CustomStringConvertible {
    /// How many executions (interleavings) were run.
    public let executions: Int
    /// Whether every interleaving within the bound was explored.
    public let exhausted: Bool
    /// The first failing execution, if any.
    public let failure: ModelFailure?
    /// The most steps one execution took.
    public let longestExecution: Int
    /// How long the exploration took, wall clock.
    public let elapsed: Duration
    /// The bound the exploration ran under: at most this many preemptions per execution.
    public let preemptionBound: Int

    public var description: String {
        if let failure {
            return "failed after \(executions) interleavings: \(failure)"
        }
        if exhausted {
            return
                "exhausted: \(executions) interleavings with at most \(preemptionBound) preemptions "
                + "(up to \(longestExecution) steps each) in \(elapsed)"
        }
        return "bounded: \(executions) interleavings explored, not exhausted"
    }
}

/// A failing execution: what went wrong, and the schedule that led there.
public struct ModelFailure: Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Sendable, Equatable {
        /// A program's expectation failed (mutual exclusion, writer preference, one outcome…).
        case violation
        /// Every thread left was parked on a futex word with nothing left to wake it.
        case lostWakeUp
        /// An execution took more steps than the limit.
        case stepLimit
        /// The program chose differently under the same schedule.
        case nondeterminism
    }

    /// What went wrong.
    public let kind: Kind
    /// The broken expectation's message, or what the parked threads wait on.
    public let message: String
    /// Every step of the failing execution, in order: which thread did what to which word.
    public let schedule: [String]

    public var description: String {
        "\(message)\nschedule:\n" + schedule.map { "  \($0)" }.joined(separator: "\n")
    }
}

/// A 32-bit atomic word for a program's own protocol (a lock written in a test): once the
/// program watches it (``ModelProgram/watch(_:as:)``), every operation on ``atomic`` is a step of
/// the schedule, and ``ModelContext/futexWait(_:_:)`` parks on its ``address``.
public final class ModelWord: @unchecked Sendable {  // the pointer is immutable; the word is atomic
    private let storage: UnsafeMutablePointer<UInt32.AtomicRepresentation>

    public init(_ value: UInt32 = 0) {
        storage = .allocate(capacity: 1)
        storage.initialize(to: .init(value))
    }

    deinit {
        storage.deinitialize(count: 1)
        storage.deallocate()
    }

    /// The word's address, for the futex calls.
    public var address: UnsafeMutableRawPointer { UnsafeMutableRawPointer(storage) }

    /// The word's atomic operations, each a scheduled step on a watched word.
    public var atomic: _ScheduledAtomic<UInt32> { _ScheduledAtomic(at: storage) }
}

extension ModelProgram {
    /// Schedules the steps on this word.
    public mutating func watch(_ word: ModelWord, as name: String) {
        watch(word: word.address, as: name)
    }
}
#endif
