import BatonInternals

// Swift Testing is imported for its `Issue.record` (its interface brings nothing else into a
// client's code). XCTest is not imported: through Foundation it would put Synchronization's
// `UInt32.AtomicRepresentation` beside swift-atomics' in every client, an ambiguity. Its
// `XCTFail` is looked up when it is needed, in the test bundle that links it.
#if canImport(Testing)
internal import Testing
#endif

extension LinearizabilityCheck {
    /// Runs the check and, if it finds a bug or cannot run, fails the current test with the
    /// report: an issue in a Swift Testing test, an `XCTFail` in an XCTest method (outside any
    /// test, it stops the process with the report).
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
    ///   - fileID: The caller's file, where a Swift Testing issue is recorded.
    ///   - filePath: The caller's file path, where an XCTest failure is recorded.
    ///   - line: The caller's line.
    ///   - column: The caller's column.
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
    /// report: an issue in a Swift Testing test, an `XCTFail` in an XCTest method (outside any
    /// test, it stops the process with the report).
    ///
    /// - Parameters:
    ///   - budget: How many rounds, and how long, at most.
    ///   - seed: The first round's seed; nil for a fresh one.
    ///   - fileID: The caller's file, where a Swift Testing issue is recorded.
    ///   - filePath: The caller's file path, where an XCTest failure is recorded.
    ///   - line: The caller's line.
    ///   - column: The caller's column.
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
        guard let xctFail = Self.xctFail else {
            fatalError("a linearizability check failed outside any Swift Testing test or XCTest method:\n\(message)")
        }
        xctFail(message, filePath, line)
    }

    /// XCTest's `XCTFail(_:file:line:)`, found by its symbol in the running process; nil where
    /// XCTest is not loaded.
    private static let xctFail: (@convention(thin) (String, StaticString, UInt) -> Void)? = {
        guard let process = dlopen(nil, RTLD_LAZY),
            let symbol = dlsym(process, "$s6XCTest7XCTFail_4file4lineySS_s12StaticStringVSutF")
        else { return nil }
        return unsafeBitCast(symbol, to: (@convention(thin) (String, StaticString, UInt) -> Void).self)
    }()
}
