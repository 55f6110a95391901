import BatonInternals
import BatonLocks
import Dispatch

/// A job made of closures that run concurrently; it finishes when all of them have returned.
///
/// The analogue of `BlockOperation`. With one block it runs on the worker's thread; with
/// several, on the worker's and other threads of Dispatch's pool at once.
///
/// ```swift
/// let thumbnails = BlockJob { render(small) }
/// thumbnails.addBlock { render(medium) }
/// thumbnails.addBlock { render(large) }
/// try queue.add(thumbnails)
/// ```
///
/// If blocks throw, the job fails with the error of the first block (in the order added) that
/// threw; the other blocks still run to the end.
///
/// Thread safety: every member may be used from any thread.
public final class BlockJob: Job {
    /// The first block, and any added with ``addBlock(_:)``. Written under JobGraph.lock while
    /// the job has not started; after that only the thread running the job (or finalizing one
    /// that never ran) touches them, once the phase change under the lock has handed them over.
    /// The first block is ``doNothing`` once the job has let go of it: a plain function needs no
    /// context, so the job never holds an optional closure (whose destruction costs more).
    @exclusivity(unchecked) private var blocks: Blocks

    /// One stored property rather than two: with two, the job's deinit retains and releases
    /// the job itself between destroying them.
    private struct Blocks {
        var first: @Sendable () throws -> Void
        var more: [@Sendable () throws -> Void] = []
    }

    /// Creates a job with one block.
    public init(name: String? = nil, priority: JobPriority = .normal, _ block: @escaping @Sendable () throws -> Void) {
        blocks = Blocks(first: block)
        super.init(name: name, priority: priority)
    }

    /// Adds a block that runs concurrently with the others.
    ///
    /// - Throws: ``JobError/alreadyExecuting(job:)`` or ``JobError/alreadyFinished(job:)`` once
    ///   the job has started.
    public func addBlock(_ block: @escaping @Sendable () throws -> Void) throws(JobError) {
        try JobGraph.lock.withLock { () throws(JobError) in
            switch machine.phase {
            case .executing: throw .alreadyExecuting(job: description)
            case .finished: throw .alreadyFinished(job: description)
            case .idle, .waiting, .ready: blocks.more.append(block)
            }
        }
    }

    public override func main() throws {
        if blocks.more.isEmpty {
            try blocks.first()
            return
        }
        let all = [blocks.first] + blocks.more
        let errors = Protected<[(index: Int, error: any Error)]>([])
        // Every block sees the job's queue as `JobQueue.current`, on whichever thread it runs.
        let queue = Int(bitPattern: runningQueueSlot.word)
        DispatchQueue.concurrentPerform(iterations: all.count) { index in
            let outer = runningQueueSlot.word
            runningQueueSlot.setWord(UnsafeRawPointer(bitPattern: queue))
            defer { runningQueueSlot.setWord(outer) }
            do {
                try all[index]()
            } catch {
                errors.write { $0.append((index, error)) }
            }
        }
        if let first = errors.value.min(by: { $0.index < $1.index }) {
            throw first.error
        }
    }

    override func runBody() throws {
        guard blocks.more.isEmpty else { return try main() }
        // Moved out rather than copied: the block is dropped as soon as it returns.
        var block: @Sendable () throws -> Void = doNothing
        swap(&block, &blocks.first)
        try block()
    }

    override func releaseBody() {
        blocks.first = doNothing
        if !blocks.more.isEmpty { blocks.more = [] }
    }
}

// The blocks are guarded by JobGraph.lock until the job starts, then handed to one thread at
// a time by the phase changes under that lock.
extension BlockJob: @unchecked Sendable {}
