#if Metrics
import BatonLocks

extension MetricsReporter {
    /// Samples a fetcher, with a `fetcher` dimension holding `name`:
    ///
    /// | metric | kind | what |
    /// |---|---|---|
    /// | `baton_fetcher_requests_total{outcome}` | counter | callers answered: `outcome` is `succeeded` (a 2xx response), `status_error` (a response of another status), `error` (no response: a transport error or a timeout), `cancelled` (by the caller, or cut off at the end of a shutdown's grace period) or `refused` (after a shutdown) |
    /// | `baton_fetcher_requests_in_flight` | gauge | requests holding a slot: sent, or waiting for the rate limiter |
    /// | `baton_fetcher_requests_queued` | gauge | requests waiting for a slot |
    /// | `baton_fetcher_retries_total{cause}` | counter | retries: `cause` is `status` (a transient status), `timeout` or `error` (another transient error) |
    /// | `baton_fetcher_sent_total` | counter | requests the transport reported back, each attempt of a retried request counted |
    /// | `baton_fetcher_send_seconds_total` | counter | the time from handing each of those to the transport until it reported, summed |
    /// | `baton_fetcher_received_bytes_total` | counter | the bytes of the bodies received |
    ///
    /// The mean latency of a request on the wire is `rate(baton_fetcher_send_seconds_total)`
    /// over `rate(baton_fetcher_sent_total)`. Callers of a coalesced GET are each counted, the
    /// request they share is sent once. Answers from the fetcher's cache are not counted here:
    /// watch the cache itself.
    ///
    /// The fetcher counts all of these whether or not it is watched, under the lock it takes for
    /// each step of a request anyway; the send time takes two clock reads per request.
    ///
    /// - Precondition: no other fetcher is watched under `name`.
    public func watch(_ fetcher: Fetcher, name: String) {
        watch(kind: "fetcher", name: name) { [weak fetcher] sample in
            guard let (counts, inFlight, queued) = fetcher?.counts else { return false }
            let fetcherName = ("fetcher", name)
            let requests = "baton_fetcher_requests_total"
            sample.count(requests, [fetcherName, ("outcome", "succeeded")], counts.succeeded)
            sample.count(requests, [fetcherName, ("outcome", "status_error")], counts.statusErrors)
            sample.count(requests, [fetcherName, ("outcome", "error")], counts.errors)
            sample.count(requests, [fetcherName, ("outcome", "cancelled")], counts.cancelled)
            sample.count(requests, [fetcherName, ("outcome", "refused")], counts.refused)
            sample.gauge("baton_fetcher_requests_in_flight", [fetcherName], inFlight)
            sample.gauge("baton_fetcher_requests_queued", [fetcherName], queued)
            let retries = "baton_fetcher_retries_total"
            sample.count(retries, [fetcherName, ("cause", "status")], counts.retriesForStatus)
            sample.count(retries, [fetcherName, ("cause", "timeout")], counts.retriesForTimeout)
            sample.count(retries, [fetcherName, ("cause", "error")], counts.retriesForError)
            sample.count("baton_fetcher_sent_total", [fetcherName], counts.sent)
            sample.seconds("baton_fetcher_send_seconds_total", [fetcherName], counts.sendTime)
            sample.count("baton_fetcher_received_bytes_total", [fetcherName], counts.bytesReceived)
            return true
        }
    }
}
#endif
