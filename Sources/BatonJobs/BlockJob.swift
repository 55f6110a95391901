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
    /// Guarded by JobGraph.lock.
    private var blocks: [@Sendable () throws -> Void]

    /// Creates a job with one block.
    public init(name: String? = nil, priority: JobPriority = .normal, _ block: @escaping @Sendable () throws -> Void) {
        blocks = [block]
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
            case .idle, .waiting, .ready: blocks.append(block)
            }
        }
    }

    public override func main() throws {
        let blocks = JobGraph.lock.withLock { self.blocks }
        if blocks.count == 1 {
            try blocks[0]()
            return
        }
        let errors = Protected<[(index: Int, error: any Error)]>([])
        DispatchQueue.concurrentPerform(iterations: blocks.count) { index in
            do {
                try blocks[index]()
            } catch {
                errors.write { $0.append((index, error)) }
            }
        }
        if let first = errors.value.min(by: { $0.index < $1.index }) {
            throw first.error
        }
    }

    override func releaseBody() {
        JobGraph.lock.withLock { blocks = [] }
    }
}

// blocks is guarded by JobGraph.lock, like the state Job keeps.
extension BlockJob: @unchecked Sendable {}
