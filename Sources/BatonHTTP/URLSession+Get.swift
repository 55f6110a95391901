import BatonLocks
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLSession {
    /// Starts a GET of `url` and calls `completionHandler` once with its outcome.
    ///
    /// One attempt, never retried. A body shorter than the response's `Content-Length`, or a
    /// connection lost before the end of the body, is an error
    /// (`URLError.networkConnectionLost`), never a response. The request times out
    /// (`URLError.timedOut`) as the session's `timeoutIntervalForRequest` or the request's
    /// `timeoutInterval` says (see <doc:RetriesAndTimeouts>).
    /// `completionHandler` runs on the session's delegate queue.
    ///
    /// - Returns: The running task (already resumed); cancel it to stop the request (its result
    ///   is then a `URLError.cancelled`).
    @discardableResult
    public func get(_ url: URL, completionHandler: @escaping @Sendable (URLResult) -> Void) -> URLSessionDataTask {
        let task = dataTask(with: url) { data, response, error in
            completionHandler(URLResult(data: data, response: response, error: error).checkingLength(method: "GET"))
        }
        task.resume()
        return task
    }

    /// Starts GETs of `left` and `right` in parallel and calls `completionHandler` once, when both
    /// outcomes are in.
    ///
    /// ```swift
    /// session.get(profileURL, avatarURL) { profile, avatar in
    ///     // Both results, each a response or an error; one failing does not lose the other.
    /// }
    /// ```
    ///
    /// The two results are joined under a lock, not by the session's delegate queue: this is
    /// correct whether that queue is serial or concurrent. `completionHandler` runs on the
    /// delegate queue, on the thread that delivered the second result, after the lock is released.
    ///
    /// - Returns: The two running tasks; cancelling one makes its result a cancellation error.
    @discardableResult
    public func get(
        _ left: URL, _ right: URL, completionHandler: @escaping @Sendable (URLResult, URLResult) -> Void
    ) -> (URLSessionDataTask, URLSessionDataTask) {
        let pair = ResultPair(completionHandler)
        let leftTask = get(left) { pair.receive($0, isLeft: true) }
        let rightTask = get(right) { pair.receive($0, isLeft: false) }
        return (leftTask, rightTask)
    }
}

/// Joins two results that may arrive on any threads, in either order, and hands both on once.
private final class ResultPair {
    private let lock = Lock()
    /// Guarded by `lock`.
    private var left: URLResult?
    /// Guarded by `lock`.
    private var right: URLResult?
    private let completion: @Sendable (URLResult, URLResult) -> Void

    init(_ completion: @escaping @Sendable (URLResult, URLResult) -> Void) {
        self.completion = completion
    }

    func receive(_ result: URLResult, isLeft: Bool) {
        let both: (URLResult, URLResult)? = lock.withLock {
            if isLeft { left = result } else { right = result }
            guard let left, let right else { return nil }
            return (left, right)
        }
        if let both { completion(both.0, both.1) }
    }
}

// `left` and `right` are guarded by `lock`; `completion` never changes.
extension ResultPair: @unchecked Sendable {}
