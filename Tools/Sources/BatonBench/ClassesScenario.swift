import BatonLocks
import BatonTesting
import Dispatch
import Foundation

/// A thread-safe class, five ways: the seed's `Warrior` (read a hand, set a hand, swap the
/// hands, juggle an item) on one thread and from several at once, as a serial queue per
/// instance, `NSLock` by hand, an actor awaited from tasks, `Protected` by hand, and
/// `@Synchronized`.
public struct ClassesScenario: Scenario {
    public let name = "classes"
    public let summary = "a thread-safe class: @Synchronized vs a serial queue, NSLock, an actor, Protected by hand"

    /// The operations, as the cases' names say them.
    enum Operation: String, CaseIterable, Sendable {
        case get, set, swap, juggle
    }

    /// Threads (or tasks, for the actor) of the contended cases.
    static let threads = 4
    /// Operations per thread in a full run.
    static let operationsPerThread = 250_000
    /// Operations of the one-thread cases in a full run.
    static let uncontendedOperations = 1_000_000

    public init() {}

    public func run(_ options: BenchOptions, progress: BenchProgress) -> ScenarioReport {
        var sheet = SampleSheet()
        let contenders = WarriorContender.all
        for rep in 1...options.reps {
            for threads in [1, Self.threads] {
                for operation in Operation.allCases {
                    let label =
                        threads == 1 ? "\(operation.rawValue), 1 thread" : "\(operation.rawValue), \(threads) threads"
                    for contender in contenders {
                        progress("classes: rep \(rep)/\(options.reps) \(label) \(contender.name)")
                        let full = threads == 1 ? Self.uncontendedOperations : Self.operationsPerThread
                        let operations = options.count(Int(Double(full) * contender.share), minimum: 10)
                        let value = contender.measure(operation, threads, operations)
                        sheet.record(value, case: label, contender: contender.name, baton: contender.baton)
                    }
                }
            }
        }
        let shares = contenders.filter { $0.share < 1 }.map { "\($0.name) \(Int(($0.share * 100).rounded()))%" }
        return ScenarioReport(
            scenario: name, cores: activeCores, quick: options.quick, results: sheet.results,
            notes: [
                "Mean wall time per operation: total wall time ÷ all operations, lower is better. get reads the left hand; set writes it; swap exchanges both hands; juggle returns the left hand's item, moves the right one left and puts a new one in the right — each one critical section.",
                "\(Self.threads) threads: each does \(options.count(Self.operationsPerThread, minimum: 10)) operations on one shared instance; the actor's are \(Self.threads) tasks that await each call. 1 thread: \(options.count(Self.uncontendedOperations, minimum: 10)) operations; the actor's are awaited from one task.",
                "Slow anchors run a share of those operations so a full run stays short: \(shares.joined(separator: ", ")).",
            ])
    }
}

/// A contender of the classes scenario: a name, and how it measures an operation.
struct WarriorContender: Sendable {
    let name: String
    let baton: Bool
    /// The fraction of the operations a slow contender runs; the figure is per operation.
    let share: Double
    let measure: @Sendable (_ operation: ClassesScenario.Operation, _ threads: Int, _ operations: Int) -> Double

    init<W: WarriorForm>(_ name: String, baton: Bool = false, share: Double = 1, _ type: W.Type) {
        self.name = name
        self.baton = baton
        self.share = share
        measure = { operation, threads, operations in
            measureForm(W.self, operation, threads: threads, operations: operations)
        }
    }

    private init(actorWithShare share: Double) {
        name = "actor"
        baton = false
        self.share = share
        measure = { operation, tasks, operations in measureActor(operation, tasks: tasks, operations: operations) }
    }

    static var all: [WarriorContender] {
        var contenders = [
            WarriorContender("serial DispatchQueue", share: 0.1, SerialQueueWarrior.self),
            WarriorContender("NSLock", NSLockWarrior.self),
            WarriorContender(actorWithShare: 0.2),
            WarriorContender("Protected by hand", ProtectedWarrior.self),
        ]
        contenders.append(WarriorContender("@Synchronized", baton: true, SynchronizedWarrior.self))
        return contenders
    }
}

/// The forms that conform to ``WarriorForm``: all but the actor.
var warriorForms: [any WarriorForm.Type] {
    var forms: [any WarriorForm.Type] = [SerialQueueWarrior.self, NSLockWarrior.self, ProtectedWarrior.self]
    forms.append(SynchronizedWarrior.self)
    return forms
}

/// Items small enough to be stored inline in a `String`: setting them allocates nothing.
private let items = ["sword", "shield"]

/// ns per operation of `threads` threads doing `operations` each on one shared instance.
private func measureForm<W: WarriorForm>(
    _ type: W.Type, _ operation: ClassesScenario.Operation, threads: Int, operations: Int
) -> Double {
    let warrior = W()
    warrior.leftHand = items[0]
    let body: @Sendable () -> Void = {
        var dropped = 0
        switch operation {
        case .get:
            for _ in 0..<operations { dropped &+= warrior.leftHand == nil ? 0 : 1 }
        case .set:
            for index in 0..<operations { warrior.leftHand = items[index & 1] }
        case .swap:
            for _ in 0..<operations { warrior.swapHands() }
        case .juggle:
            for index in 0..<operations { dropped &+= warrior.juggle(items[index & 1]) == nil ? 0 : 1 }
        }
        blackHole(dropped)
    }
    let elapsed = threads == 1 ? timeOnThisThread(body) : raceThreads(Array(repeating: body, count: threads))
    return elapsed.nanoseconds / Double(operations * threads)
}

/// ns per operation of `tasks` tasks each awaiting `operations` calls on one shared actor.
private func measureActor(_ operation: ClassesScenario.Operation, tasks: Int, operations: Int) -> Double {
    let warrior = ActorWarrior()
    let done = DispatchSemaphore(value: 0)
    let elapsed = Protected(Duration.zero)
    Task.detached {
        await warrior.setLeftHand(items[0])
        let start = ContinuousClock.now
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<tasks {
                group.addTask {
                    var dropped = 0
                    switch operation {
                    case .get:
                        for _ in 0..<operations { dropped &+= await warrior.leftHand == nil ? 0 : 1 }
                    case .set:
                        for index in 0..<operations { await warrior.setLeftHand(items[index & 1]) }
                    case .swap:
                        for _ in 0..<operations { await warrior.swapHands() }
                    case .juggle:
                        for index in 0..<operations {
                            dropped &+= await warrior.juggle(items[index & 1]) == nil ? 0 : 1
                        }
                    }
                    blackHole(dropped)
                }
            }
        }
        elapsed.write { $0 = ContinuousClock.now - start }
        done.signal()
    }
    done.wait()
    return elapsed.value.nanoseconds / Double(operations * tasks)
}
