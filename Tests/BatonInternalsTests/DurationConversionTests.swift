import BatonInternals
import Dispatch
import Testing

@Suite struct DurationConversionTests {
    @Test func wholeNanosecondsTruncatesBelowANanosecond() {
        #expect(Duration.nanoseconds(1_234_567_890).wholeNanoseconds == 1_234_567_890)
        #expect(
            (Duration.nanoseconds(5) + .init(secondsComponent: 0, attosecondsComponent: 999_999_999)).wholeNanoseconds
                == 5)
        #expect(Duration.nanoseconds(-7).wholeNanoseconds == -7)
        #expect(Duration.zero.wholeNanoseconds == 0)
    }

    @Test func wholeNanosecondsAtTheEdgesOfItsDivision() {
        // The most negative count it represents exactly, one above Int64.min.
        #expect(Duration.nanoseconds(-Int64.max).wholeNanoseconds == -Int64.max)
        #expect(Duration.nanoseconds(Int64.min).wholeNanoseconds == .min)
        // A count whose upper half is exactly 10⁹: its quotient would not fit in 64 bits, so it
        // saturates rather than dividing (10⁹ × 2⁶⁴ attoseconds).
        let upperHalfAtTheLimit = Duration(
            secondsComponent: 18_446_744_073, attosecondsComponent: 709_551_616_000_000_000)
        #expect(upperHalfAtTheLimit.wholeNanoseconds == .max)
        #expect((.zero - upperHalfAtTheLimit).wholeNanoseconds == .min)
    }

    @Test func isPositiveReadsBothHalvesOfTheCount() {
        #expect(Duration(secondsComponent: 0, attosecondsComponent: 1).isPositive)
        #expect(Duration.seconds(1).isPositive)
        // 20 s is more than 2⁶⁴ attoseconds: its upper half is 1.
        #expect(Duration.seconds(20).isPositive)
        #expect(Duration.seconds(Int64.max).isPositive)
        #expect(!Duration.zero.isPositive)
        #expect(!Duration(secondsComponent: 0, attosecondsComponent: -1).isPositive)
        #expect(!Duration.seconds(-20).isPositive)
    }

    @Test func wholeNanosecondsSaturatesInsteadOfTrappingOrWrapping() {
        #expect(Duration.seconds(Int64.max).wholeNanoseconds == .max)
        #expect(Duration.seconds(Int64.min).wholeNanoseconds == .min)
        // Just past Int64.max nanoseconds (9,223,372,036.854775807 s): the seconds multiply fits,
        // the add of the fraction does not.
        let justPast = Duration(secondsComponent: 9_223_372_036, attosecondsComponent: 854_775_808_000_000_000)
        #expect(justPast.wholeNanoseconds == .max)
        let justInside = Duration(secondsComponent: 9_223_372_036, attosecondsComponent: 854_775_807_000_000_000)
        #expect(justInside.wholeNanoseconds == .max)
        #expect(
            Duration(secondsComponent: 9_223_372_036, attosecondsComponent: 0).wholeNanoseconds
                == 9_223_372_036_000_000_000)
    }

    /// The conversion divides the 128-bit count itself; it must agree with the one written with
    /// the public `components`, which it replaced, everywhere.
    @Test func wholeNanosecondsAgreesWithTheComponentsEverywhere() {
        func reference(_ duration: Duration) -> Int64 {
            let (seconds, attoseconds) = duration.components
            let (fromSeconds, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
            if overflow { return seconds < 0 ? .min : .max }
            let (total, overflowAgain) = fromSeconds.addingReportingOverflow(attoseconds / 1_000_000_000)
            if overflowAgain { return seconds < 0 ? .min : .max }
            return total
        }
        var random = SystemRandomNumberGenerator()
        var durations: [Duration] = [
            .zero, .nanoseconds(1), .nanoseconds(-1), .seconds(60), .seconds(-60),
            Duration(secondsComponent: 0, attosecondsComponent: 1),
            Duration(secondsComponent: 0, attosecondsComponent: -1),
            Duration(secondsComponent: 0, attosecondsComponent: 999_999_999),
            Duration(secondsComponent: 0, attosecondsComponent: -999_999_999),
            Duration(secondsComponent: 9_223_372_036, attosecondsComponent: 854_775_807_999_999_999),
            Duration(secondsComponent: -9_223_372_036, attosecondsComponent: -854_775_808_000_000_000),
            Duration(secondsComponent: -9_223_372_036, attosecondsComponent: -854_775_808_000_000_001),
            .seconds(Int64.max), .seconds(Int64.min),
        ]
        for _ in 0..<20_000 {
            let seconds = Int64.random(in: -20_000_000_000...20_000_000_000, using: &random)
            let attoseconds = Int64.random(in: -999_999_999_999_999_999...999_999_999_999_999_999, using: &random)
            durations.append(Duration(secondsComponent: seconds, attosecondsComponent: attoseconds))
            durations.append(.nanoseconds(Int64.random(in: .min ... .max, using: &random)))
        }
        for duration in durations {
            #expect(duration.wholeNanoseconds == reference(duration), "\(duration)")
        }
    }

    @Test func isPositiveIsGreaterThanZero() {
        var durations: [Duration] = [
            .zero, .nanoseconds(1), .nanoseconds(-1), .seconds(Int64.max), .seconds(Int64.min),
            Duration(secondsComponent: 0, attosecondsComponent: 1),
            Duration(secondsComponent: 0, attosecondsComponent: -1),
            // A low half with its top bit set: positive, though negative as a signed word.
            Duration(secondsComponent: 10, attosecondsComponent: 0),
            Duration(secondsComponent: -10, attosecondsComponent: 0),
        ]
        var random = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            durations.append(.nanoseconds(Int64.random(in: .min ... .max, using: &random)))
        }
        for duration in durations {
            #expect(duration.isPositive == (duration > .zero), "\(duration)")
        }
    }

    @Test func floatingConversions() {
        #expect(Duration.milliseconds(1_500).seconds == 1.5)
        #expect(Duration.microseconds(3).nanoseconds == 3_000)
        #expect(Duration.seconds(-2).seconds == -2)
        // A negative fraction is added, not subtracted from its seconds' magnitude.
        #expect(Duration(secondsComponent: -1, attosecondsComponent: -500_000_000_000_000_000).seconds == -1.5)
        #expect(Duration(secondsComponent: -1, attosecondsComponent: -500_000_000_000_000_000).nanoseconds == -1.5e9)
    }

    /// Both ends of `Duration`'s range, far beyond `Int64` nanoseconds, come out finite and of
    /// their sign (the floating conversions do not saturate; they lose only precision).
    @Test func floatingConversionsAtBothEndsOfTheRange() {
        #expect(Duration.seconds(Int64.max).seconds == Double(Int64.max))
        #expect(Duration.seconds(Int64.min).seconds == Double(Int64.min))
        #expect(Duration.seconds(Int64.max).nanoseconds == Double(Int64.max) * 1e9)
        #expect(Duration.seconds(Int64.min).nanoseconds == Double(Int64.min) * 1e9)
        let smallest = Duration(secondsComponent: 0, attosecondsComponent: 1)
        #expect(smallest.seconds == 1e-18 && smallest.nanoseconds == 1e-9)
        #expect((.zero - smallest).seconds == -1e-18)
    }

    @Test func dispatchIntervalIsZeroForThePastAndNeverBeyondDispatch() {
        #expect(Duration.milliseconds(250).dispatchInterval == .nanoseconds(250_000_000))
        #expect(Duration.seconds(-1).dispatchInterval == .nanoseconds(0))
        #expect(Duration.zero.dispatchInterval == .nanoseconds(0))
        #expect(Duration.seconds(Int64.max).dispatchInterval == .never)
    }

    /// Dispatch's `.never` is `Int.max` nanoseconds: the largest interval below it is kept
    /// exactly, and everything from it up is `.never`; the far negative end is zero, and less than
    /// a nanosecond is zero (truncated, not rounded up).
    @Test func dispatchIntervalAtBothEndsOfTheRange() {
        #expect(Duration.nanoseconds(Int64.max - 1).dispatchInterval == .nanoseconds(Int(Int64.max - 1)))
        #expect(Duration.nanoseconds(Int64.max).dispatchInterval == .never)
        #expect(Duration.seconds(Int64.min).dispatchInterval == .nanoseconds(0))
        #expect(Duration.nanoseconds(Int64.min).dispatchInterval == .nanoseconds(0))
        #expect(Duration(secondsComponent: 0, attosecondsComponent: 999_999_999).dispatchInterval == .nanoseconds(0))
        #expect(Duration.nanoseconds(1).dispatchInterval == .nanoseconds(1))
    }

    @Test func secondsSaturatingRoundsToTheNearestNanosecond() {
        #expect(Duration.seconds(saturating: 0.25) == .milliseconds(250))
        #expect(Duration.seconds(saturating: 1e-9 * 2.6) == .nanoseconds(3))
        #expect(Duration.seconds(saturating: -1e-9 * 2.6) == .nanoseconds(-3))
        #expect(Duration.seconds(saturating: 1e300) == .nanoseconds(Int64.max))
        #expect(Duration.seconds(saturating: -1e300) == .nanoseconds(Int64.min))
        #expect(Duration.seconds(saturating: .infinity) == .nanoseconds(Int64.max))
        #expect(Duration.seconds(saturating: -.infinity) == .nanoseconds(Int64.min))
        #expect(Duration.seconds(saturating: .nan) == .zero)
    }

    /// At the ends of `Int64` nanoseconds: the bounds themselves (which a `Double` rounds to
    /// ±2⁶³, one past `Int64.max`) saturate instead of trapping in the conversion to `Int64`, and
    /// a value a little inside each bound is converted, not saturated.
    @Test func secondsSaturatingAtBothEndsOfInt64Nanoseconds() {
        #expect(Duration.seconds(saturating: Double(Int64.max) / 1e9) == .nanoseconds(Int64.max))
        #expect(Duration.seconds(saturating: Double(Int64.min) / 1e9) == .nanoseconds(Int64.min))
        // 9,223,372,036 s, less than a second inside each bound (and exact as a `Double`, in
        // seconds and in nanoseconds).
        #expect(Duration.seconds(saturating: 9_223_372_036) == .nanoseconds(9_223_372_036_000_000_000))
        #expect(Duration.seconds(saturating: -9_223_372_036) == .nanoseconds(-9_223_372_036_000_000_000))
    }

    @Test func powerIsTheCLibrarysPow() {
        #expect(power(2, 10) == 1_024)
        #expect(power(1.5, 0) == 1)
        #expect(power(10, 400) == .infinity)
    }
}
