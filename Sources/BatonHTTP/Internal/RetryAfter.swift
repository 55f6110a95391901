import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Reads a `Retry-After` header (RFC 9110 §10.2.3): delta-seconds or an HTTP-date.
enum RetryAfter {
    /// The wait `response` asks for, or `nil` if it has no valid `Retry-After`. A date in the
    /// past asks for no wait.
    static func delay(in response: URLResponse, now: Date = Date()) -> Duration? {
        guard let value = (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Retry-After") else { return nil }
        return delay(value, now: now)
    }

    static func delay(_ value: String, now: Date) -> Duration? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
            // A huge number is a long wait, not an error: it saturates, and the cap applies.
            return .seconds(Int64(text) ?? .max)
        }
        guard let date = date(text) else { return nil }
        let seconds = max(0, date.timeIntervalSince(now))
        return .milliseconds(Int64((seconds * 1000).rounded(.up)))
    }

    /// The three HTTP-date forms a recipient must accept: IMF-fixdate, RFC 850, asctime.
    private static let formats = [
        "EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy",
    ]

    private static func date(_ text: String) -> Date? {
        // A formatter per call: this runs once per retried response, and DateFormatter is not
        // documented as safe to share between threads on every platform.
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        for format in formats {
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }
}
