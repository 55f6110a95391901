import BatonTesting
import Foundation

/// Futures against the alternatives a Swift user already has: the cost of one future (create,
/// observe, resolve), `all` over many futures completed at once or from other threads, a long
/// chain of `map`s, and how soon a combination reports a failure while another operation is
/// still slow.
public struct FuturesScenario: Scenario {
    public let name = "futures"
    public let summary = "Future/Promise vs NIO EventLoopFuture, DispatchGroup, TaskGroup, async let"

    /// Futures per measurement in a full run.
    static let futureCount = 100_000
    /// The fail-fast operations: a slow one and one that fails, full and `--quick`.
    static let slowDelay: Duration = .seconds(2)
    static let failDelay: Duration = .milliseconds(100)
    static let quickSlowDelay: Duration = .milliseconds(200)
    static let quickFailDelay: Duration = .milliseconds(10)

    /// The unit of the fail-fast case: milliseconds from the start until the failure is seen.
    static let milliseconds = "ms"

    public init() {}

    public func run(_ options: BenchOptions, progress: BenchProgress) throws -> ScenarioReport {
        let count = options.count(Self.futureCount, minimum: 100)
        let slow = options.quick ? Self.quickSlowDelay : Self.slowDelay
        let fail = options.quick ? Self.quickFailDelay : Self.failDelay
        let contenders = FutureContenders()
        let nio = NIOFutureAnchor()
        defer { nio.shutdown() }

        var sheet = SampleSheet()
        /// ns per input to make and free one small object per input: the least any future type
        /// that is an object pays in "make + join". A note, not a contender: no one picks it.
        var allocationFloor: [Double] = []
        func record(
            _ name: String, _ contender: String, baton: Bool, unit: String = Unit.nanosecondsPerOperation,
            _ value: Double
        ) {
            sheet.record(value, case: name, contender: contender, baton: baton, unit: unit)
        }

        // Repetitions outermost, so a noisy moment on a shared machine hits one rep of every
        // contender rather than every rep of one.
        for rep in 1...options.reps {
            func step(_ label: String) { progress("futures: rep \(rep)/\(options.reps) \(label)") }

            let single = "create+observe+resolve"
            step(single)
            record(single, "Future", baton: true, try contenders.batonSingle(count))
            record(single, "NIO EventLoopPromise", baton: false, try nio.single(count))

            let join = "all, \(count) immediate: join"
            step(join)
            record(join, "Future", baton: true, try contenders.batonJoin(count))
            record(join, "NIO EventLoopPromise", baton: false, try nio.join(count))
            record(join, "DispatchGroup", baton: false, contenders.dispatchGroupAll(count, async: false))

            let immediate = "all, \(count) immediate: make + join"
            step(immediate)
            // Right before Future's turn, so both see the heap in the same state.
            allocationFloor.append(contenders.allocationFloor(count))
            record(immediate, "Future", baton: true, try contenders.batonAll(count, async: false))
            record(immediate, "NIO EventLoopPromise", baton: false, try nio.all(count, async: false))
            record(immediate, "DispatchGroup", baton: false, contenders.dispatchGroupAll(count, async: false))
            record(immediate, "TaskGroup", baton: false, contenders.taskGroupAll(count))

            let asynchronous = "all, \(count) async"
            step(asynchronous)
            record(asynchronous, "Future", baton: true, try contenders.batonAll(count, async: true))
            record(asynchronous, "NIO EventLoopPromise", baton: false, try nio.all(count, async: true))
            record(asynchronous, "DispatchGroup", baton: false, contenders.dispatchGroupAll(count, async: true))
            record(asynchronous, "TaskGroup", baton: false, contenders.taskGroupAll(count))

            let chain = "chain of \(count) maps"
            step(chain)
            record(chain, "Future", baton: true, try contenders.batonChain(count))
            record(chain, "NIO EventLoopPromise", baton: false, try nio.chain(count))

            let delays = "\(Int(fail.nanoseconds / 1e6)) ms fails, \(Int(slow.nanoseconds / 1e6)) ms slow"
            let unit = Self.milliseconds
            for combinator in ["zip", "all"] {
                let failFast = "fail fast: \(combinator) (\(delays))"
                step(failFast)
                record(
                    failFast, "Future", baton: true, unit: unit,
                    contenders.batonFailFast(slow: slow, fail: fail, all: combinator == "all"))
                record(
                    failFast, "async let", baton: false, unit: unit, contenders.asyncLetFailFast(slow: slow, fail: fail)
                )
                record(
                    failFast, "throwing TaskGroup", baton: false, unit: unit,
                    contenders.taskGroupFailFast(slow: slow, fail: fail))
            }
        }

        let results = sheet.results
        let floor = BenchResult.median(of: allocationFloor)
        let groupMakeAndJoin = results.first { $0.case.hasSuffix("make + join") && $0.contender == "DispatchGroup" }
        var floorNote =
            "Making and freeing one small object per input (the least a future that is an object costs) takes \(formatted(floor, digits: 1)) ns here (median)"
        if let group = groupMakeAndJoin?.median {
            floorNote += ", \(formatted(floor / group, digits: 2))× the whole DispatchGroup fan-out."
        } else {
            floorNote += "."
        }
        return ScenarioReport(
            scenario: name, cores: activeCores, quick: options.quick, results: results,
            notes: [
                "ns/op: wall time per future (per map for the chain), lower is better; every contender does the same work.",
                "create+observe+resolve: make a promise, register one callback, complete it; NIO's runs on its event loop thread (where its callbacks run without a hop), Baton's on a plain thread.",
                "all, immediate: join: \(count) futures that completed before the clock started, joined into an array in order (Future.all; NIO whenAllSucceed), against a DispatchGroup fan-out of \(count) results (enter/store-under-lock/leave), which has no inputs to make.",
                "all, immediate: make + join: the same, with making and freeing the \(count) completed futures inside the clock; TaskGroup runs \(count) child tasks collected in order. \(floorNote)",
                "all, async: each future is completed by a block on the global dispatch queue; DispatchGroup does the same fan-out with async blocks.",
                "fail fast: ms from the start until the combination reports the failure; the failing operation alone takes \(Int(fail.nanoseconds / 1e6)) ms. The slow operation is a callback API bridged with a continuation, so it cannot be cancelled: async let and the task group wait for it; zip and all report at once.",
            ])
    }
}
