import Baton
import BatonTestSupport
import Testing

// The "After" code of Baton.docc/MigratingFromBarrierQueues.md, verbatim.

final class HitCounter: Sendable {
    private let counts = Protected([String: Int]())

    func count(for page: String) -> Int {
        counts.read { $0[page] ?? 0 }
    }

    func record(_ page: String) {
        counts.write { $0[page, default: 0] += 1 }
    }

    func takeCount(for page: String) -> Int {  // read and reset: one section
        counts.write { $0.removeValue(forKey: page) ?? 0 }
    }
}

final class RouteTable: Sendable {
    private let lock = ReadWriteLock()
    nonisolated(unsafe) private var routes: [String: String] = [:]  // guarded by `lock`

    func destination(for path: String) -> String? {
        lock.withReadLock { routes[path] }
    }

    func add(_ destination: String, for path: String) {
        lock.withWriteLock { routes[path] = destination }
    }
}

@Suite("Guide: replacing a concurrent queue with barriers", .offTheCooperativePool, .timeLimit(.minutes(1)))
struct BarrierQueueGuideTests {
    static let threads = 8
    static let operations = 5_000

    @Test("HitCounter: racing writers lose no hit while readers read", arguments: 1...3)
    func recordsEveryHit(round: Int) {
        let counter = HitCounter()
        let decreases = Protected(0)
        raceThreads(Self.threads) { index in
            var lastSeen = 0
            for _ in 0..<Self.operations {
                if index.isMultiple(of: 2) {
                    counter.record("/home")
                } else {
                    // A reader never sees the count go down while only records happen.
                    let seen = counter.count(for: "/home")
                    if seen < lastSeen { decreases.write { $0 += 1 } }
                    lastSeen = seen
                }
            }
        }
        #expect(decreases.value == 0)
        #expect(counter.count(for: "/home") == Self.threads / 2 * Self.operations)
    }

    @Test("HitCounter: takeCount reads and resets in one step, so no hit is lost or counted twice", arguments: 1...3)
    func takeCountIsAtomic(round: Int) {
        let counter = HitCounter()
        let taken = Protected(0)
        raceThreads(Self.threads) { index in
            for _ in 0..<Self.operations {
                if index.isMultiple(of: 2) {
                    counter.record("/home")
                } else {
                    let count = counter.takeCount(for: "/home")
                    taken.write { $0 += count }
                }
            }
        }
        let recorded = Self.threads / 2 * Self.operations
        #expect(taken.value + counter.takeCount(for: "/home") == recorded)
        #expect(counter.count(for: "/home") == 0)
    }

    @Test("RouteTable: every route added by racing writers is there, readers see whole values", arguments: 1...3)
    func routesAreAllAdded(round: Int) {
        let table = RouteTable()
        let wrongValues = Protected(0)
        raceThreads(Self.threads) { index in
            for step in 0..<Self.operations / 10 {
                if index.isMultiple(of: 2) {
                    table.add("handler \(index) \(step)", for: "/\(index)/\(step)")
                } else if let found = table.destination(for: "/\(index - 1)/\(step)") {
                    if found != "handler \(index - 1) \(step)" { wrongValues.write { $0 += 1 } }
                }
            }
        }
        #expect(wrongValues.value == 0)
        for index in stride(from: 0, to: Self.threads, by: 2) {
            for step in 0..<Self.operations / 10 {
                #expect(table.destination(for: "/\(index)/\(step)") == "handler \(index) \(step)")
            }
        }
        #expect(table.destination(for: "/nowhere") == nil)
    }
}
