#if os(Linux)
import BatonTesting
import XCTest

/// `expectLinearizable()` in an XCTest method: the failure goes through XCTest. The failures it
/// records are captured here instead of failing the method, and then checked.
final class ExpectLinearizableXCTests: XCTestCase {
    private var capturing = false
    private var captured: [(description: String, file: String, line: Int)] = []

    override func recordFailure(
        withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool
    ) {
        if capturing {
            captured.append((description, filePath, lineNumber))
        } else {
            super.recordFailure(withDescription: description, inFile: filePath, atLine: lineNumber, expected: expected)
        }
    }

    func testAFailingCheckFailsTheMethodWithItsReportAtTheCall() {
        capturing = true
        let line = #line + 1
        let report = Counters.perThread().expectLinearizable()
        capturing = false
        XCTAssertEqual(report?.outcome, .notLinearizable)
        XCTAssertEqual(captured.count, 1)
        XCTAssertTrue(captured.first?.description.contains("not linearizable") == true, "\(captured)")
        XCTAssertTrue(captured.first?.description.contains("replay: run(seed:") == true)
        XCTAssertEqual(captured.first?.line, line)
        XCTAssertTrue(captured.first?.file.hasSuffix("ExpectLinearizableXCTests.swift") == true)
    }

    func testACheckThatCannotRunFailsTheMethodWithTheReason() {
        capturing = true
        let report = Counters.protected(operations: []).expectLinearizable()
        capturing = false
        XCTAssertNil(report)
        XCTAssertEqual(captured.count, 1)
        XCTAssertTrue(captured.first?.description.contains("the operation list is empty") == true)
    }

    func testAPassingCheckRecordsNothing() {
        capturing = true
        let report = Counters.protected().expectLinearizable(budget: CheckBudget(rounds: 50, time: .seconds(30)))
        capturing = false
        XCTAssertEqual(report?.passed, true)
        XCTAssertTrue(captured.isEmpty, "\(captured)")
    }
}
#endif
