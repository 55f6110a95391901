import BatonLocks
import BatonTesting

/// A set's sequential specification for one guest: `add` returns whether the guest was new,
/// `remove` whether they were there.
struct GuestListModel: SequentialModel, Sendable {
    enum Operation: Sendable, Hashable {
        case add(String)
        case remove(String)
    }

    var initialState: Set<String> { [] }

    func step(_ guests: Set<String>, _ operation: Operation, _ output: Bool) -> Set<String>? {
        var guests = guests
        switch operation {
        case .add(let name): return output == guests.insert(name).inserted ? guests : nil
        case .remove(let name): return output == (guests.remove(name) != nil) ? guests : nil
        }
    }
}

/// Non-atomic check-then-act: `add` and `remove` ask `contains` under the lock, then change
/// the set under it again; two threads that both pass the check both report a change.
final class GuestList: @unchecked Sendable {  // `lock` guards `names`
    private let lock = Lock()
    private var names: Set<String> = []

    func contains(_ name: String) -> Bool { lock.withLock { names.contains(name) } }

    /// Adds `name`; true if it was not on the list.
    func add(_ name: String) -> Bool {
        if contains(name) { return false }
        lock.withLock { _ = names.insert(name) }
        return true
    }

    /// Removes `name`; true if it was on the list.
    func remove(_ name: String) -> Bool {
        guard contains(name) else { return false }
        lock.withLock { _ = names.remove(name) }
        return true
    }
}

/// The same list in `Protected`: each check and its change are one `write`.
final class ProtectedGuestList: Sendable {
    private let names = Protected(Set<String>())

    func add(_ name: String) -> Bool { names.write { $0.insert(name).inserted } }

    func remove(_ name: String) -> Bool { names.write { $0.remove(name) != nil } }
}

extension Zoo {
    static func guestListCheck<List: Sendable>(
        _ make: @escaping () -> List, add: @escaping @Sendable (List, String) -> Bool,
        remove: @escaping @Sendable (List, String) -> Bool
    ) -> LinearizabilityCheck<List, GuestListModel.Operation, Bool> {
        LinearizabilityCheck(model: GuestListModel(), operations: [.add("ada"), .remove("ada")], make: make) {
            list, operation in
            switch operation {
            case .add(let name): add(list, name)
            case .remove(let name): remove(list, name)
            }
        }
    }

    static var guestList: Exhibit {
        Exhibit(type: "GuestList", bug: "check-then-act") { budget in
            try guestListCheck({ GuestList() }, add: { $0.add($1) }, remove: { $0.remove($1) }).run(budget: budget)
        }
    }

    static var protectedGuestList: Exhibit {
        Exhibit(type: "ProtectedGuestList (Protected)", bug: nil) { budget in
            try guestListCheck({ ProtectedGuestList() }, add: { $0.add($1) }, remove: { $0.remove($1) })
                .run(budget: budget)
        }
    }
}
