import Atomics

/// Every lock order seen in the process: an edge from lock A to lock B means some thread took B
/// while holding A. A new edge that closes a cycle is an inversion.
///
/// Only locks that were held while another was taken have a node, so the graph stays as small as
/// the program's nesting. A lock leaves it when it is deinitialised, before its address can be
/// reused.
final class LockOrderGraph {
    struct Edge: Hashable {
        let from: ObjectIdentifier
        let to: ObjectIdentifier
    }

    private struct Node {
        let lock: LockDescription
        /// The orders out of this lock, with how they were first seen.
        var out: [ObjectIdentifier: LockOrder] = [:]
        var into: Set<ObjectIdentifier> = []
    }

    private struct State {
        var nodes: [ObjectIdentifier: Node] = [:]
        /// Cycles already reported, by the edge that closed them, so each is reported once.
        var reported: Set<Edge> = []
    }

    static let shared = LockOrderGraph()

    private let state = InternalMutex(State())
    /// Bumped when a lock leaves the graph: threads then forget the orders they cached.
    let generation = ManagedAtomic<UInt64>(0)

    /// Records that `held` was held when `acquiring` was taken at `site`; returns the inversion
    /// if this order closes a cycle that was not reported before.
    func record(
        held: ThreadLockState.Held, acquiring id: ObjectIdentifier, _ identity: LockIdentity,
        at site: SourceSite
    ) -> LockOrderInversion? {
        let edge = Edge(from: held.id, to: id)
        return state.withLock { state in
            guard state.nodes[held.id]?.out[id] == nil else { return nil }
            let order = LockOrder(
                first: held.identity.description, second: identity.description,
                firstTakenAt: held.site, secondTakenAt: site, thread: currentThreadID())
            let path = Self.path(from: id, to: held.id, in: state.nodes)
            if state.nodes[held.id] == nil { state.nodes[held.id] = Node(lock: order.first) }
            if state.nodes[id] == nil { state.nodes[id] = Node(lock: order.second) }
            state.nodes[held.id]!.out[id] = order
            state.nodes[id]!.into.insert(held.id)
            guard let path, state.reported.insert(edge).inserted else { return nil }
            return LockOrderInversion(newOrder: order, earlierOrders: path)
        }
    }

    /// Whether the lock has a node: it was held while another lock was taken, or the reverse.
    func contains(_ id: ObjectIdentifier) -> Bool {
        state.withLock { $0.nodes[id] != nil }
    }

    /// Forgets a lock that is going away.
    func remove(_ id: ObjectIdentifier) {
        state.withLock { state in
            guard let node = state.nodes.removeValue(forKey: id) else { return }
            for source in node.into { state.nodes[source]?.out[id] = nil }
            for target in node.out.keys { state.nodes[target]?.into.remove(id) }
            state.reported = state.reported.filter { $0.from != id && $0.to != id }
            generation.wrappingIncrement(ordering: .releasing)
        }
    }

    /// The orders leading from `start` to `goal`, found breadth-first (so the shortest chain),
    /// or `nil` if there is none.
    private static func path(
        from start: ObjectIdentifier, to goal: ObjectIdentifier, in nodes: [ObjectIdentifier: Node]
    ) -> [LockOrder]? {
        var cameFrom: [ObjectIdentifier: (source: ObjectIdentifier, order: LockOrder)] = [:]
        var frontier = [start]
        var seen: Set = [start]
        while !frontier.isEmpty {
            var next: [ObjectIdentifier] = []
            for id in frontier {
                for (target, order) in nodes[id]?.out ?? [:] where seen.insert(target).inserted {
                    cameFrom[target] = (id, order)
                    guard target != goal else {
                        var chain = [order]
                        var at = id
                        while at != start, let previous = cameFrom[at] {
                            chain.append(previous.order)
                            at = previous.source
                        }
                        return chain.reversed()
                    }
                    next.append(target)
                }
            }
            frontier = next
        }
        return nil
    }
}

// Its state is behind an InternalMutex and its generation is atomic.
extension LockOrderGraph: Sendable {}
