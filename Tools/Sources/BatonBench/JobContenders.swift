import BatonJobs
import BatonTesting
import Dispatch
import Foundation

/// A job graph to run: each job's dependencies, as indices of earlier jobs (so the graph is
/// acyclic and the indices are a topological order).
struct JobGraphShape: Sendable {
    let dependencies: [[Int]]
    /// Whether the queues get the jobs last first, each dependent before what it waits for.
    var addedLastFirst = false
    var count: Int { dependencies.count }
    /// Whether no job has a dependency: each contender then uses its plain submit path.
    var isIndependent: Bool { dependencies.allSatisfy(\.isEmpty) }

    static func independent(_ count: Int) -> JobGraphShape {
        JobGraphShape(dependencies: Array(repeating: [], count: count))
    }

    /// Each job waits for the one before.
    static func chain(_ count: Int, addedLastFirst: Bool) -> JobGraphShape {
        JobGraphShape(dependencies: (0..<count).map { $0 == 0 ? [] : [$0 - 1] }, addedLastFirst: addedLastFirst)
    }

    /// `count - 1` independent jobs, and a last one that waits for all of them.
    static func fanIn(_ count: Int) -> JobGraphShape {
        var dependencies = Array(repeating: [Int](), count: count - 1)
        dependencies.append(Array(0..<(count - 1)))
        return JobGraphShape(dependencies: dependencies)
    }

    /// Each job waits for two distinct random earlier jobs (the first two for fewer).
    static func randomDAG(_ count: Int, seed: UInt64) -> JobGraphShape {
        var generator = SeededGenerator(seed: seed)
        return JobGraphShape(
            dependencies: (0..<count).map { index in
                switch index {
                case 0: return []
                case 1: return [0]
                default:
                    let first = Int.random(in: 0..<index, using: &generator)
                    var second = Int.random(in: 0..<(index - 1), using: &generator)
                    if second >= first { second += 1 }
                    return [first, second]
                }
            })
    }
}

/// The work of one job: a few arithmetic steps, kept from the optimiser.
@inline(never)
func tinyWork(_ index: Int) {
    var x = UInt64(truncatingIfNeeded: index)
    for _ in 0..<8 { x = x &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407 }
    blackHole(x)
}

/// A contender of the jobs scenario: a way to run a job graph to the end, timed from the
/// first job created to the last one finished.
struct JobsContender: Sendable {
    let name: String
    let baton: Bool
    let run: @Sendable (JobGraphShape, _ workers: Int) -> Duration

    static let all: [JobsContender] = [
        JobsContender(name: "OperationQueue", baton: false, run: runOperationQueue),
        JobsContender(name: "DispatchQueue+DispatchGroup", baton: false, run: runDispatch),
        JobsContender(name: "JobQueue", baton: true, run: runJobQueue),
    ]
}

/// Foundation's `OperationQueue`: `addOperation` for independent work; `BlockOperation`s with
/// `addDependency` added in one batch for a graph.
private func runOperationQueue(_ shape: JobGraphShape, workers: Int) -> Duration {
    let queue = OperationQueue()
    queue.maxConcurrentOperationCount = workers
    return timeOnThisThread {
        if shape.isIndependent {
            for index in 0..<shape.count { queue.addOperation { tinyWork(index) } }
        } else {
            var operations: [Operation] = []
            operations.reserveCapacity(shape.count)
            for index in 0..<shape.count {
                let operation = BlockOperation { tinyWork(index) }
                for dependency in shape.dependencies[index] { operation.addDependency(operations[dependency]) }
                operations.append(operation)
            }
            queue.addOperations(shape.addedLastFirst ? operations.reversed() : operations, waitUntilFinished: false)
        }
        queue.waitUntilAllOperationsAreFinished()
    }
}

/// The GCD way: `async(group:)` and `wait` for independent work (and `notify` for the fan-in's
/// last job); for a graph, a `DispatchGroup` per job that its dependents `notify` on (built
/// first to last: a group must exist before anything can wait for it).
private func runDispatch(_ shape: JobGraphShape, workers: Int) -> Duration {
    let global = DispatchQueue.global()
    return timeOnThisThread {
        if shape.isIndependent {
            let group = DispatchGroup()
            for index in 0..<shape.count { global.async(group: group) { tinyWork(index) } }
            group.wait()
            return
        }
        let all = DispatchGroup()
        var done: [DispatchGroup] = []
        done.reserveCapacity(shape.count)
        for index in 0..<shape.count {
            let finished = DispatchGroup()
            finished.enter()
            all.enter()
            done.append(finished)
            let body: @Sendable () -> Void = {
                tinyWork(index)
                finished.leave()
                all.leave()
            }
            let dependencies = shape.dependencies[index]
            switch dependencies.count {
            case 0:
                global.async(execute: body)
            case 1:
                done[dependencies[0]].notify(queue: global, execute: body)
            default:
                let ready = DispatchGroup()
                for dependency in dependencies {
                    ready.enter()
                    done[dependency].notify(queue: global) { ready.leave() }
                }
                ready.notify(queue: global, execute: body)
            }
        }
        all.wait()
    }
}

/// Baton: `addJob` for independent work; `BlockJob`s with `addDependency` added in one batch
/// for a graph.
private func runJobQueue(_ shape: JobGraphShape, workers: Int) -> Duration {
    let queue = JobQueue(name: "bench", maxConcurrentJobs: workers)
    return timeOnThisThread {
        if shape.isIndependent {
            for index in 0..<shape.count { queue.addJob { tinyWork(index) } }
        } else {
            var jobs: [Job] = []
            jobs.reserveCapacity(shape.count)
            for index in 0..<shape.count {
                let job = BlockJob { tinyWork(index) }
                for dependency in shape.dependencies[index] { try! job.addDependency(jobs[dependency]) }
                jobs.append(job)
            }
            try! queue.add(shape.addedLastFirst ? jobs.reversed() : jobs)
        }
        queue.waitUntilAllJobsAreFinished()
    }
}
