import BatonInternals
import BatonLocks

/// Debug-build reports of futures misused in a way that is tolerated but probably a bug.
///
/// Thread safety: the handler may be replaced from any thread; reports may arrive on any thread.
public enum FutureDiagnostics {
    /// A promise was completed after its future had already completed (the second completion
    /// was ignored).
    public struct DuplicateCompletion: Sendable, CustomStringConvertible {
        /// The future's value type, e.g. `"Int"`.
        public let valueType: String
        /// Where the ignored completion was made.
        public let file: String
        public let line: UInt

        @usableFromInline
        init(valueType: String, file: String, line: UInt) {
            self.valueType = valueType
            self.file = file
            self.line = line
        }

        public var description: String {
            "Promise<\(valueType)> completed twice; the completion at \(file):\(line) was ignored "
                + "(use tryComplete(with:) where completers race on purpose)"
        }
    }

    private static let handler = Protected<@Sendable (DuplicateCompletion) -> Void>({ report in
        let line = "BatonFutures: \(report)\n"
        _ = line.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
    })

    /// Receives every duplicate completion in debug builds; by default it prints a line on
    /// standard error. Release builds ignore duplicate completions silently and never call it.
    public static var duplicateCompletionHandler: @Sendable (DuplicateCompletion) -> Void {
        get { handler.value }
        set { handler.write { $0 = newValue } }
    }

    @usableFromInline
    static func reportDuplicateCompletion(_ report: DuplicateCompletion) {
        duplicateCompletionHandler(report)
    }
}
