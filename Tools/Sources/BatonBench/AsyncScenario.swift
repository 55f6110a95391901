/// Baton's primitives for Swift concurrency against what async code uses without them: an
/// actor-based semaphore written as users write it, a call into an actor, a `static let` and an
/// `NSLock`-guarded optional.
public struct AsyncScenario: Scenario {
    public let name = "async"
    public let summary =
        "AsyncSemaphore, AsyncLock, Lazy, AsyncLazy, concurrentMap vs an actor semaphore, an actor call, static let, NSLock, task groups; timed waits; RateLimiter's rate"

    /// Operations per case in a full run.
    static let semaphoreOperations = 2_000_000
    static let uncontendedLockOperations = 2_000_000
    static let contendedLockOperations = 100_000
    static let readOperations = 10_000_000
    /// Wait + signal pairs in the timed-wait case: most of them suspend, and arm a timer.
    static let timedSemaphoreOperations = 400_000

    /// Elements of the bounded parallel map (not scaled: the case is about this many), its
    /// width, and how many maps a full run times per contender.
    static let mapElements = 10_000
    static let mapWidth = 8
    static let mapRounds = 20

    /// The semaphore cases: (tasks, width).
    static let semaphoreCases: [(tasks: Int, width: Int)] = [(1, 1), (8, 2), (64, 4)]
    /// Tasks in the contended lock case.
    static let contendedTasks = 16
    /// The rate limiter case: its rate, how long it runs (in a quick run, and in a full one) and
    /// the tasks that take permits.
    static let ratePermitsPerSecond = 10_000
    static let rateDuration: Duration = .seconds(2)
    static let quickRateDuration: Duration = .milliseconds(200)
    static let rateTasks = 4

    public init() {}

    public func run(_ options: BenchOptions, progress: BenchProgress) -> ScenarioReport {
        var sheet = SampleSheet()
        func record(_ name: String, _ contender: String, baton: Bool, _ value: Double) {
            sheet.record(value, case: name, contender: contender, baton: baton)
        }
        let semaphoreOps = options.count(Self.semaphoreOperations, minimum: 64 * 4)
        let uncontendedOps = options.count(Self.uncontendedLockOperations, minimum: 100)
        let contendedOps = options.count(Self.contendedLockOperations, minimum: Self.contendedTasks * 4)
        let readOps = options.count(Self.readOperations, minimum: 1_000)
        let timedOps = options.count(Self.timedSemaphoreOperations, minimum: 8 * 4)

        let mapRounds = options.count(Self.mapRounds, minimum: 1)
        let rateDuration = options.quick ? Self.quickRateDuration : Self.rateDuration
        // Spelled out: `ratePermitsPerSecond`, and the two durations.
        let rateCase = "RateLimiter, 10,000 permits/s over \(options.quick ? "0.2" : "2") s"

        // Repetitions outermost, so a noisy moment on a shared machine hits one rep of every
        // contender rather than every rep of one.
        for rep in 1...options.reps {
            func step(_ label: String) { progress("async: rep \(rep)/\(options.reps) \(label)") }

            for (tasks, width) in Self.semaphoreCases {
                let label = tasks == 1 ? "semaphore, 1 task" : "semaphore, \(tasks) tasks, width \(width)"
                step(label)
                record(
                    label, "AsyncSemaphore", baton: true,
                    AsyncContenders.batonSemaphore(tasks: tasks, width: width, operations: semaphoreOps))
                record(
                    label, "actor semaphore", baton: false,
                    AsyncContenders.actorSemaphore(tasks: tasks, width: width, operations: semaphoreOps))
            }

            let uncontended = "lock, uncontended"
            step(uncontended)
            record(
                uncontended, "AsyncLock", baton: true, AsyncContenders.batonLockUncontended(operations: uncontendedOps))
            record(uncontended, "actor call", baton: false, AsyncContenders.actorCall(operations: uncontendedOps))

            let contended = "lock, \(Self.contendedTasks) tasks, await inside"
            step(contended)
            record(
                contended, "AsyncLock", baton: true,
                AsyncContenders.batonLockAcrossAwait(tasks: Self.contendedTasks, operations: contendedOps))
            record(
                contended, "actor semaphore", baton: false,
                AsyncContenders.actorSemaphoreAcrossAwait(tasks: Self.contendedTasks, operations: contendedOps))

            // A timeout that never fires, against the same wait without one: what a timed wait
            // costs when it suspends (a wait that does not suspend arms no timer).
            let timedSemaphore = "timed semaphore wait, 8 tasks, width 2"
            step(timedSemaphore)
            record(
                timedSemaphore, "wait(timeout:)", baton: true,
                AsyncContenders.batonSemaphoreTimed(tasks: 8, width: 2, operations: timedOps))
            record(
                timedSemaphore, "wait()", baton: false,
                AsyncContenders.batonSemaphore(tasks: 8, width: 2, operations: timedOps))

            let timedLock = "timed lock, \(Self.contendedTasks) tasks, await inside"
            step(timedLock)
            record(
                timedLock, "withLock(timeout:)", baton: true,
                AsyncContenders.batonLockAcrossAwaitTimed(tasks: Self.contendedTasks, operations: contendedOps))
            record(
                timedLock, "withLock", baton: false,
                AsyncContenders.batonLockAcrossAwait(tasks: Self.contendedTasks, operations: contendedOps))

            let map = "concurrentMap, 10,000 elements, width \(Self.mapWidth)"
            step(map)
            let (elements, width) = (Self.mapElements, Self.mapWidth)
            record(
                map, "concurrentMap", baton: true,
                AsyncContenders.concurrentMap(elements: elements, width: width, rounds: mapRounds))
            record(
                map, "task group + AsyncSemaphore", baton: false,
                AsyncContenders.taskGroupWithSemaphore(elements: elements, width: width, rounds: mapRounds))
            record(
                map, "unbounded task group", baton: false,
                AsyncContenders.unboundedTaskGroup(elements: elements, rounds: mapRounds))

            let lazy = "Lazy read"
            step(lazy)
            record(lazy, "Lazy", baton: true, AsyncContenders.lazyRead(operations: readOps))
            record(lazy, "static let", baton: false, AsyncContenders.staticLetRead(operations: readOps))
            record(lazy, "NSLock + optional", baton: false, AsyncContenders.nsLockRead(operations: readOps))

            let asyncLazy = "AsyncLazy read, async call"
            step(asyncLazy)
            record(asyncLazy, "AsyncLazy", baton: true, AsyncContenders.asyncLazyRead(operations: readOps))
            record(asyncLazy, "static let", baton: false, AsyncContenders.staticLetReadInTask(operations: readOps))
            record(asyncLazy, "NSLock + optional", baton: false, AsyncContenders.nsLockReadInTask(operations: readOps))

            let inline = "AsyncLazy read, inline"
            step(inline)
            record(inline, "AsyncLazy", baton: true, AsyncContenders.asyncLazyReadInline(operations: readOps))
            record(inline, "NSLock + optional", baton: false, AsyncContenders.nsLockReadInline(operations: readOps))

            step(rateCase)
            sheet.record(
                AsyncContenders.rateLimiterRate(
                    permitsPerSecond: Self.ratePermitsPerSecond, over: rateDuration, tasks: Self.rateTasks),
                case: rateCase, contender: "RateLimiter", baton: true, unit: Unit.ofConfiguredRate)
        }

        return ScenarioReport(
            scenario: name, cores: activeCores, quick: options.quick, results: sheet.results,
            notes: [
                "ns/op: wall time ÷ operations, lower is better. One operation: a wait + signal; a withLock or an actor call; one read.",
                "Semaphore cases: \(semaphoreOps) wait + signal pairs shared by the tasks; the actor semaphore is an actor with a count and a queue of continuations, as users write it.",
                "lock, uncontended: \(uncontendedOps) increments from one task, inside AsyncLock.withLock or as a call into an actor.",
                "lock, \(Self.contendedTasks) tasks: \(contendedOps) sections of read, Task.yield(), write; the anchor is the actor semaphore used as a lock (an actor alone would interleave the sections). Both counters are checked exact.",
                "Timed waits: \(timedOps) wait + signal pairs from 8 tasks at width 2, and the lock case above, each with a timeout of 60 s that never fires, against the same untimed wait in the same run: the cost of the timer armed when a wait suspends.",

                "concurrentMap: \(Self.mapElements) trivial elements (an integer multiply), mapped \(mapRounds) time(s) per contender and rep, \(Self.mapWidth) at a time, results checked in order; the anchors are the hand-written bound (a child task per element, all added at once, each waiting for one of \(Self.mapWidth) AsyncSemaphore permits) and an unbounded task group. ns/op: per element.",
                "\(rateCase): \(Self.rateTasks) tasks take one permit at a time from a RateLimiter of \(Self.ratePermitsPerSecond) permits/s (burst: 10 ms of permits) on the continuous clock; the rate granted beyond the initial burst ÷ the rate configured, up to the last grant. The goal is 1 within 1%; never above 1 by more than rounding.",
                "Reads: \(readOps) reads of an Int computed at run time, after initialisation. Lazy read and AsyncLazy read, async call: one call each, of the same kind for every contender (plain calls for Lazy, async calls inside a task for AsyncLazy, which is read with await), so that a static let is not hoisted out of the loop; an async call alone costs about 20 ns here. AsyncLazy read, inline: `try await lazy.value` written in the loop, whose fast path is inlined (no call), against the NSLock-guarded optional read the same way; a static let read so would be hoisted, so it is left out.",
            ])
    }
}
