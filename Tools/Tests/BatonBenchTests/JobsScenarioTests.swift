import BatonBench
import Testing

@Suite struct JobsScenarioTests {
    /// The jobs scenario at a tiny size: every case has a row for every contender, with
    /// positive times, and the Baton row is marked.
    @Test func everyCaseAndContenderIsMeasured() throws {
        let report = JobsScenario().run(BenchOptions(quick: true, reps: 1, scale: 0.001), progress: .silent)
        #expect(report.scenario == "jobs")
        let cases = ["independent", "chain", "chain, in order", "fan-in", "random DAG", "random DAG ×4"]
        let contenders = ["OperationQueue", "DispatchQueue+DispatchGroup", "JobQueue"]
        #expect(report.cases == cases)
        #expect(report.contenders == contenders)
        #expect(report.results.count == cases.count * contenders.count)
        for name in cases {
            for contender in contenders {
                guard let row = report.result(case: name, contender: contender) else {
                    Issue.record("missing row \(name) / \(contender)")
                    continue
                }
                #expect(row.unit == "ns/op")
                #expect(row.median > 0 && row.worst > 0, "\(name) / \(contender)")
                #expect(row.reps == 1)
                #expect(row.baton == (contender == "JobQueue"))
            }
        }
        #expect(allScenarios.contains { $0.name == "jobs" })
    }
}
