#if Logging
import Foundation
import Logging

/// A real swift-log `Logger` whose handler keeps every entry in memory, for tests of what Baton
/// logs: the levels, messages and metadata as a service's log handler would receive them.
public final class LogCapture: @unchecked Sendable {  // `lock` guards `stored`
    public struct Entry: Sendable {
        public let level: Logger.Level
        public let message: String
        public let metadata: Logger.Metadata

        /// The metadata value of `key` as a string (an array's elements joined by `", "`).
        public subscript(_ key: String) -> String? {
            switch metadata[key] {
            case .string(let string): string
            case .stringConvertible(let value): value.description
            case .array(let values): values.map(\.description).joined(separator: ", ")
            case .dictionary(let values): values.description
            case nil: nil
            }
        }
    }

    private let lock = NSLock()
    private var stored: [Entry] = []

    public init() {}

    /// A logger at `.trace`, so that every entry reaches the capture.
    public var logger: Logger {
        var logger = Logger(label: "baton.tests") { _ in Handler(capture: self) }
        logger.logLevel = .trace
        return logger
    }

    /// Every entry logged so far, in order.
    public var entries: [Entry] {
        lock.withLock { stored }
    }

    fileprivate func append(_ entry: Entry) {
        lock.withLock { stored.append(entry) }
    }

    private struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { _, entry in entry }
            capture.append(Entry(level: event.level, message: event.message.description, metadata: merged))
        }
    }
}
#endif
