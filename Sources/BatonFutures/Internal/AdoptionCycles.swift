import BatonLocks

/// Finds the cycles that adoption would close: a promise completed with a future that waits,
/// through the futures it adopted in turn, for the promise's own future.
///
/// The edges are the ``CancelAction/adopted(_:)`` entries of pending futures (a future drops
/// them when it completes), so nothing is recorded beyond what cancellation already keeps,
/// and a completed future ends every path through it.
enum AdoptionCycles {
    /// Makes the check and the edge it allows one step: two adoptions racing to close a cycle
    /// (A adopts B while B adopts A) are checked one after the other, and the second finds the
    /// first's edge. Taken before a future's lock stripe, never while one is held, and no
    /// callback runs under it.
    static let lock = Lock(name: "Future.adoption")

    /// Whether `start` is `target` or waits for it along adoption edges of pending futures.
    ///
    /// The edges form no cycle (each was added only after this check), so the walk ends. A chain
    /// of single edges, the usual shape, is walked without allocating; once a future has
    /// several edges, the walk keeps a set of the futures it has visited.
    ///
    /// - Complexity: O(*n*) in the futures and edges reachable from `start`.
    static func reachesLocked(_ target: AnyObject, from start: any CancellableFuture) -> Bool {
        var next: (any CancellableFuture)? = start
        var waiting: [any CancellableFuture] = []
        var visited = Set<ObjectIdentifier>()
        var branched = false
        while let future = next ?? waiting.popLast() {
            next = nil
            if future === target { return true }
            if branched && !visited.insert(ObjectIdentifier(future)).inserted { continue }
            future.forEachAdoptedFuture { adopted in
                if next == nil {
                    next = adopted
                } else {
                    waiting.append(adopted)
                    branched = true
                }
            }
        }
        return false
    }
}
