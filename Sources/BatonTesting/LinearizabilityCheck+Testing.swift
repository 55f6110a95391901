#if canImport(Testing)
import Testing
#endif
#if canImport(XCTest)
import XCTest
#endif

extension LinearizabilityCheck {
    /// Runs the check and, if it finds a bug or cannot run, fails the current test with the
    /// report: an issue in a Swift Testing test, an `XCTFail` in an XCTest method.
    ///
    /// ```swift
    /// @Test func counterIsLinearizable() {
    ///     check.expectLinearizable()
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - budget: How many rounds, and how long, at most.
    ///   - seed: The first round's seed; nil for a fresh one.
    /// - Returns: The report, or nil if the check could not run (the test has failed with
    ///   the reason).
    @discardableResult
    public func expectLinearizable(
        budget: CheckBudget = .default, seed: UInt64? = nil, fileID: String = #fileID,
        filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) -> LinearizabilityReport? {
        let location = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
        do {
            let report = try run(budget: budget, seed: seed)
            if !report.passed { location.fail(report.description) }
            return report
        } catch {
            location.fail(error.description)
            return nil
        }
    }
}

@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
extension AsyncLinearizabilityCheck {
    /// Runs the check and, if it finds a bug or cannot run, fails the current test with the
    /// report: an issue in a Swift Testing test, an `XCTFail` in an XCTest method.
    ///
    /// - Parameters:
    ///   - budget: How many rounds, and how long, at most.
    ///   - seed: The first round's seed; nil for a fresh one.
    /// - Returns: The report, or nil if the check could not run (the test has failed with
    ///   the reason).
    @discardableResult
    public func expectLinearizable(
        budget: CheckBudget = .default, seed: UInt64? = nil, fileID: String = #fileID,
        filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) async -> LinearizabilityReport? {
        let location = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
        do {
            let report = try await run(budget: budget, seed: seed)
            if !report.passed { location.fail(report.description) }
            return report
        } catch {
            location.fail(error.description)
            return nil
        }
    }
}

/// Where a check was called from, and how to fail the test running there.
struct CallSite {
    var fileID: String
    var filePath: StaticString
    var line: UInt
    var column: UInt

    /// Records `message` as a failure of the running test: a Swift Testing issue when a Swift
    /// Testing test is running, otherwise an XCTest failure.
    func fail(_ message: String) {
        #if canImport(Testing)
        if Test.current != nil {
            Issue.record(
                Comment(rawValue: message),
                sourceLocation: SourceLocation(
                    fileID: fileID, filePath: "\(filePath)", line: Int(line), column: Int(column)))
            return
        }
        #endif
        #if canImport(XCTest)
        XCTFail(message, file: filePath, line: line)
        #else
        fatalError("a linearizability check failed outside any test:\n\(message)")
        #endif
    }
}
