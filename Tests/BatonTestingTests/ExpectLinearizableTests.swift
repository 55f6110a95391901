import BatonLocks
import BatonTesting
import Testing

@Suite(.timeLimit(.minutes(1))) struct ExpectLinearizableTests {
    @Test func aFailingCheckFailsTheTestWithItsReport() {
        withKnownIssue {
            let report = Counters.perThread().expectLinearizable()
            #expect(report?.outcome == .notLinearizable)
        } matching: { issue in
            issue.comments.contains { $0.rawValue.hasPrefix("not linearizable") && $0.rawValue.contains("replay:") }
        }
    }

    @Test func aCheckThatCannotRunFailsTheTestWithTheReason() {
        withKnownIssue {
            #expect(Counters.protected(operations: []).expectLinearizable() == nil)
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("the operation list is empty") }
        }
    }

    @Test func aPassingCheckRecordsNothing() {
        let report = Counters.protected().expectLinearizable(budget: CheckBudget(rounds: 50, time: .seconds(30)))
        #expect(report?.passed == true)
    }

    @Test func theIssueIsRecordedAtTheCall() {
        let line = #line + 2
        withKnownIssue {
            Counters.perThread().expectLinearizable()
        } matching: { issue in
            issue.sourceLocation?.line == line && issue.sourceLocation?.fileName == "ExpectLinearizableTests.swift"
        }
    }

    @Test func anAsyncFailingCheckFailsTheTest() async {
        await withKnownIssue {
            let report = await AsyncLinearizabilityCheckTests.reentrant().expectLinearizable(seed: 1)
            #expect(report?.outcome == .notLinearizable)
        } matching: { issue in
            issue.comments.contains { $0.rawValue.hasPrefix("not linearizable") }
        }
    }
}
