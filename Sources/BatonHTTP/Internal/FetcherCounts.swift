import BatonFutures
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a fetcher counts for `MetricsReporter`, kept in its state machine under the lock that
/// every step it counts takes anyway: plain adds, no atomic, no metrics call on a request's path.
struct FetcherCounts {
    /// Callers answered with a 2xx response.
    var succeeded = 0
    /// Callers answered with a response of another status.
    var statusErrors = 0
    /// Callers answered with no response: a transport error or a timeout.
    var errors = 0
    /// Callers whose request was cancelled, by themselves or by the end of a shutdown's grace
    /// period.
    var cancelled = 0
    /// Callers refused because the fetcher was shut down.
    var refused = 0
    /// Requests the transport reported back (each attempt of a retried request counts).
    var sent = 0
    /// The time from handing each of those to the transport until it reported, summed.
    var sendTime = Duration.zero
    /// The bytes of the bodies received.
    var bytesReceived = 0
    /// Retries after a transient status, a timeout and any other transient error.
    var retriesForStatus = 0
    var retriesForTimeout = 0
    var retriesForError = 0

    /// How a caller was answered.
    enum Answer {
        case succeeded, statusError, error, cancelled

        /// How a caller of the whole result (``Fetcher/result(of:)``) was answered.
        static func of(_ answer: Result<URLResult, any Error>) -> Answer {
            switch answer {
            case .failure: .cancelled
            case .success(.error(let error, _, _)): error is FetcherShutDownError ? .cancelled : .error
            case .success(.response(_, let response)):
                (200..<300).contains((response as? HTTPURLResponse)?.statusCode ?? 200) ? .succeeded : .statusError
            }
        }

        /// How a caller of a body (``Fetcher/body(of:)``) was answered: a body is a 2xx response,
        /// an `HTTPStatusError` any other status, and a `FetcherShutDownError` or a cancellation
        /// a request cancelled.
        static func of(body answer: Result<Data, any Error>) -> Answer {
            switch answer {
            case .success: .succeeded
            case .failure(let error) where error is HTTPStatusError: .statusError
            case .failure(let error) where error is CancellationError || error is FetcherShutDownError: .cancelled
            case .failure: .error
            }
        }
    }

    /// A caller has its answer.
    mutating func count(_ answer: Answer) {
        switch answer {
        case .succeeded: succeeded += 1
        case .statusError: statusErrors += 1
        case .error: errors += 1
        case .cancelled: cancelled += 1
        }
    }

    /// A request is retried after `cause`.
    mutating func count(retryAfter cause: any Error) {
        if cause is HTTPStatusError {
            retriesForStatus += 1
        } else if (cause as? FutureError)?.code == .timedOut {
            retriesForTimeout += 1
        } else if let error = cause as? URLError, error.code == .timedOut {
            retriesForTimeout += 1
        } else {
            retriesForError += 1
        }
    }
}

/// A request the transport has reported back: how long it took and the bytes of its body.
struct SentRequest {
    let duration: Duration
    let bytes: Int
}
