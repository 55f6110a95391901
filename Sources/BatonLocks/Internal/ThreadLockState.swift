import Atomics
import BatonInternals

/// What the lock diagnostics know about one thread: the locks it holds, in the order taken, and
/// the lock orders it has already recorded. Only its own thread touches it.
final class ThreadLockState {
    struct Held: Sendable {
        let id: ObjectIdentifier
        let identity: LockIdentity
        let mode: LockHoldMode
        let file: StaticString
        let line: UInt
        /// When it was taken, if hold times were being checked.
        let since: ContinuousClock.Instant?

        var site: SourceSite { SourceSite(file, line) }
    }

    var held: [Held] = []
    /// Orders (held, acquired) this thread knows are in the graph already, valid while the
    /// graph's generation is `knownGeneration`.
    var knownOrders: Set<LockOrderGraph.Edge> = []
    var knownGeneration: UInt64 = 0
    var epoch: UInt32

    init(epoch: UInt32) {
        self.epoch = epoch
    }

    /// Bumped whenever a diagnostics switch changes; a thread that sees a new value forgets the
    /// locks it thought it held, since some of them were taken or released unseen.
    static let switchEpoch = UnsafeAtomic<UInt32>.create(0)

    private static let slot = ThreadSlot.objects()

    /// The calling thread's state, created on first use.
    static var current: ThreadLockState {
        let epoch = switchEpoch.load(ordering: .relaxed)
        guard let state = slot.object(ThreadLockState.self)?.takeUnretainedValue() else {
            let state = ThreadLockState(epoch: epoch)
            slot.setObject(state)
            return state
        }
        if state.epoch != epoch {
            state.epoch = epoch
            state.held.removeAll()
        }
        return state
    }

    /// The calling thread's state if it has one, without creating it.
    static var existing: ThreadLockState? {
        slot.object(ThreadLockState.self)?.takeUnretainedValue()
    }

    /// Removes and returns the latest record of holding `id`.
    func release(_ id: ObjectIdentifier) -> Held? {
        guard let index = held.lastIndex(where: { $0.id == id }) else { return nil }
        return held.remove(at: index)
    }
}
