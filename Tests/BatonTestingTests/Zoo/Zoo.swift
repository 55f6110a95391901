import BatonTestSupport
import BatonTesting
import Testing

/// One type of the zoo and its check: a realistic hand-written concurrency bug, or a correct
/// version that must pass.
struct Exhibit: Sendable, CustomTestStringConvertible {
    /// The type checked.
    var type: String
    /// The kind of bug; nil for a correct type.
    var bug: String?
    /// What the check concludes with `budget`.
    var expected: LinearizabilityReport.Outcome
    /// The budget the tests give it.
    var budget: CheckBudget
    /// Runs the check once.
    var check: @Sendable (CheckBudget) async throws -> LinearizabilityReport

    init(
        type: String, bug: String?, expected: LinearizabilityReport.Outcome? = nil, budget: CheckBudget = .default,
        check: @escaping @Sendable (CheckBudget) async throws -> LinearizabilityReport
    ) {
        self.type = type
        self.bug = bug
        self.expected = expected ?? (bug == nil ? .passed : .notLinearizable)
        self.budget = budget
        self.check = check
    }

    var testDescription: String { bug.map { "\(type): \($0)" } ?? type }

    /// The check with its test budget, as a row of the detection table.
    var row: DetectionTable.Row {
        DetectionTable.Row(type: type, bug: bug, expected: expected) { [check, budget] in try await check(budget) }
    }
}

/// The bug zoo: hand-written mistakes of different kinds that a linearizability check finds
/// with the default budget, and correct versions that pass it.
enum Zoo {
    /// The buggy types.
    static var bugs: [Exhibit] {
        var bugs = [accessorLockedCounter, readThenWriteAccount, priceTag, guestList, handRolledSemaphore]
        if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) { bugs.append(wallet) }
        return bugs
    }

    /// The correct types.
    static var correct: [Exhibit] {
        var correct = [protectedAccount, protectedGuestList, registeringSemaphore, memoryCache]
        #if Macros
        correct.append(synchronizedPriceTag)
        #endif
        if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
            correct += [lockedWallet, singleFlightMemoryCache]
        }
        return correct
    }

    /// Seed 003's class: every accessor locked, `count += 1` still two critical sections.
    static var accessorLockedCounter: Exhibit {
        Exhibit(type: "AccessorLockedCounter", bug: "lost update (`+=` on locked accessors)") { budget in
            try Counters.racy().run(budget: budget)
        }
    }
}
