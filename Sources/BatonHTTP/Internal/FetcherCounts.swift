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

    /// A caller has its answer.
    mutating func count(answer: Result<URLResult, any Error>) {
        switch answer {
        case .failure: cancelled += 1
        case .success(.error(let error, _, _)):
            if error is FetcherShutDownError { cancelled += 1 } else { errors += 1 }
        case .success(.response(_, let response)):
            let status = (response as? HTTPURLResponse)?.statusCode ?? 200
            if (200..<300).contains(status) { succeeded += 1 } else { statusErrors += 1 }
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
