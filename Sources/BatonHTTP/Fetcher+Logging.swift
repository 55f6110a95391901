#if Logging
import Foundation
import Logging

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Fetcher {
    /// Logs the fetcher's retries and give-ups to `logger`, in place of the event handler (see
    /// ``setEventHandler(_:)``).
    ///
    /// ```swift
    /// fetcher.setEventLogger(Logger(label: "fetcher"))
    /// ```
    ///
    /// A retry is logged at `.info`, a request that gives up at `.warning`, each with the
    /// request, the attempt and the cause as metadata (``Event/logMetadata``). Requests that
    /// succeed, or fail for good on their first answer, log nothing.
    ///
    /// Available with Baton's `Logging` trait, which adds apple/swift-log.
    public func setEventLogger(_ logger: Logger) {
        setEventHandler { event in
            logger.log(level: event.logLevel, "\(event.message)", metadata: event.logMetadata)
        }
    }
}

extension Fetcher.Event {
    /// `.info` for a retry, `.warning` for a request that gives up.
    public var logLevel: Logger.Level {
        switch self {
        case .retrying: .info
        case .gaveUp: .warning
        }
    }

    /// The event as structured metadata, for a log entry.
    ///
    /// | key | value |
    /// |---|---|
    /// | `baton.event` | `retrying` or `gave-up` |
    /// | `http.method` | the request's method |
    /// | `url` | the request's URL |
    /// | `baton.attempt` | retrying: the attempt that failed, from 1 |
    /// | `baton.attempts` | gave up: the attempts made |
    /// | `baton.cause` | the fault: `status 503`, or the transport error as it describes itself |
    /// | `baton.retry_in_ms` | retrying: the wait before the next attempt, in milliseconds |
    public var logMetadata: Logger.Metadata {
        var metadata: Logger.Metadata = [
            "http.method": .string((request.httpMethod ?? "GET").uppercased()),
            "url": .string(request.url?.absoluteString ?? ""),
            "baton.cause": .string(Self.describe(cause)),
        ]
        switch self {
        case .retrying(_, let attempt, _, let delay):
            metadata["baton.event"] = "retrying"
            metadata["baton.attempt"] = .stringConvertible(attempt)
            let (seconds, attoseconds) = delay.components
            metadata["baton.retry_in_ms"] = .stringConvertible(Double(seconds) * 1e3 + Double(attoseconds) / 1e15)
        case .gaveUp(_, let attempts, _):
            metadata["baton.event"] = "gave-up"
            metadata["baton.attempts"] = .stringConvertible(attempts)
        }
        return metadata
    }

    /// A short message; the metadata carry the rest.
    var message: String {
        switch self {
        case .retrying: "Fetcher: retrying a request after a transient fault"
        case .gaveUp: "Fetcher: a request failed on its last attempt"
        }
    }

    private static func describe(_ cause: any Error) -> String {
        if let status = cause as? HTTPStatusError { return "status \(status.statusCode)" }
        return String(describing: cause)
    }
}
#endif
