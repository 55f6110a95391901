import BatonInternals

/// How long ``Future/retry(attempts:backoff:while:_:)`` waits before each new attempt.
///
/// ```swift
/// .constant(.milliseconds(100))                    // 100 ms, 100 ms, …
/// .exponential(initial: .milliseconds(100))        // 100 ms, 200 ms, 400 ms, … up to 30 s
/// .jittered(initial: .milliseconds(100))           // random in 0…100 ms, 0…200 ms, …
/// ```
///
/// Use ``jittered(initial:multiplier:maximum:)`` when many clients may retry against the same
/// server at once: the random spread keeps their retries from arriving together.
///
/// Thread safety: an immutable value.
public struct Backoff: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        case constant(Duration)
        case exponential(initial: Duration, multiplier: Double, maximum: Duration, jittered: Bool)
    }

    let kind: Kind

    /// Retries at once.
    public static let none = Backoff(kind: .constant(.zero))

    /// The same `delay` before every retry.
    public static func constant(_ delay: Duration) -> Backoff {
        precondition(delay >= .zero, "Backoff.constant: the delay must not be negative")
        return Backoff(kind: .constant(delay))
    }

    /// `initial` before the first retry, multiplied by `multiplier` before each later one, and
    /// never more than `maximum`.
    public static func exponential(
        initial: Duration, multiplier: Double = 2, maximum: Duration = .seconds(30)
    ) -> Backoff {
        precondition(initial >= .zero && maximum >= .zero, "Backoff.exponential: delays must not be negative")
        precondition(multiplier >= 1, "Backoff.exponential: the multiplier must be at least 1")
        return Backoff(kind: .exponential(initial: initial, multiplier: multiplier, maximum: maximum, jittered: false))
    }

    /// Like ``exponential(initial:multiplier:maximum:)``, but each delay is chosen uniformly at
    /// random between zero and the exponential delay ("full jitter").
    public static func jittered(
        initial: Duration, multiplier: Double = 2, maximum: Duration = .seconds(30)
    ) -> Backoff {
        precondition(initial >= .zero && maximum >= .zero, "Backoff.jittered: delays must not be negative")
        precondition(multiplier >= 1, "Backoff.jittered: the multiplier must be at least 1")
        return Backoff(kind: .exponential(initial: initial, multiplier: multiplier, maximum: maximum, jittered: true))
    }

    /// The wait before retry number `retry` (1 is the retry after the first failed attempt).
    public func delay(beforeRetry retry: Int) -> Duration {
        precondition(retry >= 1, "Backoff: retries are numbered from 1")
        switch kind {
        case .constant(let delay):
            return delay
        case .exponential(let initial, let multiplier, let maximum, let jittered):
            let factor = power(multiplier, Double(retry - 1))
            let capped = min(initial.seconds * factor, maximum.seconds)
            let seconds = jittered ? Double.random(in: 0...capped) : capped
            return .seconds(saturating: seconds)
        }
    }
}
