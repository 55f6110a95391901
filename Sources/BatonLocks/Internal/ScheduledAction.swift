import BatonInternals

/// An action that runs once a delay has passed unless it is cancelled first: a timer of the
/// process's ``DeadlineTimers``, for the deadlines of the modules built on this one (a future's
/// timeout, a request's).
///
/// Cancelling takes the timer out of the heap at once, so a deadline that is never reached costs
/// an insertion and a removal under a mutex. (A Dispatch `asyncAfter` cannot be taken back: it
/// stays queued, with what it captured, until its deadline.)
package struct ScheduledAction: Sendable {
    private let timer: DeadlineTimer

    /// Arms the action to run after `delay` (at once for zero or less; a delay past the scale's
    /// bound of about 292 years never comes).
    ///
    /// - Parameter action: Runs on the timers' serial queue, which every timed wait of the
    ///   process shares: it must be short and must not block. Hand anything longer, and any
    ///   caller's code, to another queue.
    package init(after delay: Duration, _ action: @escaping @Sendable () -> Void) {
        let (deadline, overflow) = ContinuousNanoseconds.now.addingReportingOverflow(delay.wholeNanoseconds)
        let timer = ActionTimer(deadline: overflow ? (delay > .zero ? .max : .min) : deadline, action: action)
        DeadlineTimers.shared.arm(timer)
        self.timer = timer
    }

    /// Cancels the action.
    ///
    /// - Returns: `true` if it had not run, so it never will; `false` if it is running or has
    ///   run (or was cancelled before).
    @discardableResult
    package func cancel() -> Bool {
        DeadlineTimers.shared.disarm(timer)
    }
}
