import BatonLocks
import Dispatch
import Testing

@testable import BatonBench

/// The classes scenario at a tiny size: every case has every form of the class, with sane
/// numbers. Nothing here judges speed.
@Suite struct ClassesScenarioTests {
    @Test(.timeLimit(.minutes(1)))
    func everyCaseHasEveryForm() {
        let report = ClassesScenario().run(BenchOptions(quick: true, reps: 1, scale: 0.001), progress: .silent)
        #expect(report.scenario == "classes")
        let operations = ["get", "set", "swap", "juggle"]
        #expect(report.cases == operations.map { "\($0), 1 thread" } + operations.map { "\($0), 4 threads" })
        let baton: Set<String> = ["@Synchronized"]
        let forms = baton.union(["serial DispatchQueue", "NSLock", "actor", "Protected by hand"])
        #expect(Set(report.contenders) == forms)
        #expect(report.results.count == report.cases.count * forms.count)
        for result in report.results {
            #expect(result.median > 0 && result.median.isFinite)
            #expect(result.baton == baton.contains(result.contender))
        }
        #expect(ReportTable(report).render().contains("@Synchronized vs Protected by hand"))
    }

    /// Every form the bench measures is a correct thread-safe class: threads juggling unique
    /// items lose none and drop none twice, with swaps racing them.
    @Test(.timeLimit(.minutes(1)), arguments: [1, 4])
    func everyFormKeepsTheJuggleInvariant(threads: Int) {
        for form in warriorForms {
            let warrior = form.init()
            warrior.leftHand = "start"
            let dropped = Protected<[String]>([])
            DispatchQueue.concurrentPerform(iterations: threads) { thread in
                for index in 0..<500 {
                    if index % 7 == 0 { warrior.swapHands() }
                    if let item = warrior.juggle("\(thread)-\(index)") { dropped.write { $0.append(item) } }
                }
            }
            // Whatever is still in hand: drain it with two juggles of markers.
            var all = dropped.value
            for marker in ["end-1", "end-2"] {
                if let item = warrior.juggle(marker) { all.append(item) }
            }
            let expected = ["start"] + (0..<threads).flatMap { thread in (0..<500).map { "\(thread)-\($0)" } }
            #expect(all.count == expected.count, "\(form)")
            #expect(Set(all) == Set(expected), "\(form)")
        }
    }
}
