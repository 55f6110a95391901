import Dispatch

extension Duration {
    /// The duration in seconds, for reports.
    var seconds: Double { self / .seconds(1) }
    /// The duration in whole nanoseconds (the stress runs' durations are far below the bound).
    var wholeNanoseconds: Int64 { Int64(self / .nanoseconds(1)) }
    /// The duration as a Dispatch interval.
    var dispatchInterval: DispatchTimeInterval { .nanoseconds(Int(self / .nanoseconds(1))) }
}
