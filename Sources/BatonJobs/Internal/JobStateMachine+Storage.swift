/// The storage of ``JobStateMachine`` that its transitions build on: the finished outcome in
/// one word, the flags in one byte, the extras out of line, and the observers' outbox.
extension JobStateMachine {
    /// A finished job's outcome in one word: success needs nothing more, any other outcome is
    /// boxed (failures and cancellations are the rare case).
    enum FinishedOutcome {
        case succeeded
        case other(OutcomeBox)

        init(_ outcome: JobOutcome) {
            if case .succeeded = outcome {
                self = .succeeded
            } else {
                self = .other(OutcomeBox(outcome))
            }
        }

        var outcome: JobOutcome {
            switch self {
            case .succeeded: .succeeded
            case .other(let box): box.outcome
            }
        }
    }

    final class OutcomeBox {
        let outcome: JobOutcome
        init(_ outcome: JobOutcome) { self.outcome = outcome }
    }

    /// Something to hand to the job's observers or do after it finished, in order.
    enum Delivery {
        case state(JobState, [@Sendable (JobState) -> Void])
        /// Run the completion handler, then release the dependents.
        case finalize
    }

    /// The yes-or-no fields, in one byte.
    struct Flags {
        var bits: UInt8 = 0

        static let linked: UInt8 = 1 << 0
        static let hasDependents: UInt8 = 1 << 1
        static let ran: UInt8 = 1 << 2
        static let finalized: UInt8 = 1 << 3
        static let inInbox: UInt8 = 1 << 4
        static let marked: UInt8 = 1 << 5
        static let runsDespiteFailures: UInt8 = 1 << 6

        subscript(flag: UInt8) -> Bool {
            @inline(__always) get { bits & flag != 0 }
            @inline(__always) set { bits = newValue ? bits | flag : bits & ~flag }
        }
    }

    /// What most jobs never have, out of line: a plain job is smaller, and cheaper to make and
    /// to free. Guarded by ``JobGraph/lock``, like the rest of the state.
    final class Extras {
        var observers: [@Sendable (JobState) -> Void] = []
        var outbox: [Delivery] = []
        /// Whether some thread is draining `outbox`; only that thread delivers, so observers see
        /// transitions in order and never two at once.
        var delivering = false
        var completion: (@Sendable (Job) -> Void)?
        var waiters: [JobWaiter] = []
        /// Observed jobs outside any queue that wait for this one, held weakly, so that their
        /// observers hear `.ready` when the last dependency finishes. Rare: a job only gets
        /// here when something observes it before it is added to a queue.
        var watchers: [WeakJob] = []
        /// See ``JobStateMachine/cancellation``.
        var cancellation: JobCancellationReason?
    }

    /// The extras, made on first use.
    mutating func makeExtras() -> Extras {
        if let extras { return extras }
        let made = Extras()
        extras = made
        return made
    }

    /// Whether finishing has nothing to hand to anyone first (no observer, no completion
    /// handler, no delivery under way), so the job can be finalized under the same lock hold.
    /// Static, on the extras alone: a property on a state stored in a job would copy the whole
    /// state.
    static func finishesQuietly(_ extras: Extras?) -> Bool {
        guard let extras else { return true }
        return extras.observers.isEmpty && extras.completion == nil && !extras.delivering
    }

    /// Records a state change for the observers. Returns true when the caller must become the
    /// deliverer (drain the outbox after unlocking).
    @inline(__always)
    mutating func emit(_ state: JobState) -> Bool {
        // Inlined down to this check: most jobs have no extras.
        guard extras != nil else { return false }
        return emitToObservers(state)
    }

    private mutating func emitToObservers(_ state: JobState) -> Bool {
        guard let extras, !extras.observers.isEmpty else { return false }
        extras.outbox.append(.state(state, extras.observers))
        return becomeDeliverer()
    }

    mutating func becomeDeliverer() -> Bool {
        let extras = makeExtras()
        if extras.delivering { return false }
        extras.delivering = true
        return true
    }
}
