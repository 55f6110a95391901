extension Duration {
    /// The duration in nanoseconds, for reports and ratios.
    var nanoseconds: Double { self / .nanoseconds(1) }
    /// The duration in seconds, for reports.
    var seconds: Double { self / .seconds(1) }
}
