import Dispatch

/// The conversions of a `Duration` that Baton's modules need, with one overflow rule:
/// **saturating**. A duration beyond what the target type represents becomes the nearest value
/// it does represent (the largest or smallest `Int64`; `.never` for Dispatch), never a trap and
/// never a wrapped value. Fractions below a nanosecond are truncated toward zero.
extension Duration {
    /// The duration in whole nanoseconds, truncated toward zero, saturating at the bounds of
    /// `Int64` (about ±292 years).
    ///
    /// One 128-by-64-bit division of the duration's attoseconds (`_high` and `_low`, the two
    /// halves of the 128-bit count that `Duration`'s frozen layout makes public), where
    /// `components` divides in software: a timed wait converts its timeout on every call.
    @inlinable
    package var wholeNanoseconds: Int64 {
        let negative = _high < 0
        var high = UInt64(bitPattern: _high)
        var low = _low
        if negative {
            // The magnitude: the two's complement of the 128-bit count.
            low = ~low &+ 1
            high = ~high &+ (low == 0 ? 1 : 0)
        }
        // Beyond 10⁹ × 2⁶⁴ attoseconds the quotient exceeds 64 bits; far beyond `Int64` anyway.
        guard high < 1_000_000_000 else { return negative ? .min : .max }
        let magnitude = UInt64(1_000_000_000).dividingFullWidth((high: high, low: low)).quotient
        guard magnitude <= UInt64(Int64.max) else { return negative ? .min : .max }
        return negative ? -Int64(magnitude) : Int64(magnitude)
    }

    /// Whether the duration is greater than zero: `self > .zero` from the public halves of the
    /// count, where `Duration.zero` is a call into the standard library.
    @inlinable
    package var isPositive: Bool {
        _high > 0 || (_high == 0 && _low > 0)
    }

    /// The duration in nanoseconds as a floating-point number (for reports and ratios).
    package var nanoseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1e9 + Double(attoseconds) / 1e9
    }

    /// The duration in seconds as a floating-point number.
    package var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// The duration as a Dispatch interval in nanoseconds: `.never` beyond what Dispatch
    /// represents, zero for a negative duration (a deadline already past).
    package var dispatchInterval: DispatchTimeInterval {
        let nanoseconds = wholeNanoseconds
        if nanoseconds <= 0 { return .nanoseconds(0) }
        guard let whole = Int(exactly: nanoseconds), whole < Int.max else { return .never }
        return .nanoseconds(whole)
    }

    /// `duration` from a floating-point number of seconds, saturating at the bounds of
    /// `Int64` nanoseconds; zero for NaN.
    package static func seconds(saturating seconds: Double) -> Duration {
        let nanoseconds = (seconds * 1e9).rounded()
        if nanoseconds.isNaN { return .zero }
        if nanoseconds >= 9.223_372_036_854_775e18 { return .nanoseconds(Int64.max) }
        if nanoseconds <= -9.223_372_036_854_775e18 { return .nanoseconds(Int64.min) }
        return .nanoseconds(Int64(nanoseconds))
    }
}
