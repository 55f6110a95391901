import Baton
import Foundation
import Testing

// The "After" code of Baton.docc/MigratingFromOperationQueue.md, verbatim; the blocks that are
// statements sit in the tests below.

func link(_ job: Job, after dependency: Job) -> String? {
    do {
        try job.addDependency(dependency)
        return nil
    } catch {
        return error.description  // names every job on the cycle
    }
}

/// The guide's work: an archive, and the names of the files in it.
func fetchArchive() throws -> Data {
    Data("README.md,Package.swift,main.swift".utf8)
}

struct EmptyArchive: Error {}

func unpackArchive(_ archive: Data) throws -> [String] {
    guard !archive.isEmpty else { throw EmptyArchive() }
    return String(decoding: archive, as: UTF8.self).split(separator: ",").map(String.init)
}

/// What the guide's main-queue job shows.
@MainActor var shownFiles: [String] = []

@MainActor func showFiles(_ files: [String]) {
    shownFiles = files
}

@Suite("Guide: moving from OperationQueue to JobQueue", .timeLimit(.minutes(1)))
struct OperationQueueGuideTests {
    @Test("A queue on a target queue, its current queue, and its jobs in order")
    func targetCurrentAndJobs() async {
        let database = DispatchQueue(label: "database")
        let writes = JobQueue(name: "writes", maxConcurrentJobs: 1, target: database)  // underlyingQueue
        let saved = Protected([String]())
        writes.isSuspended = true
        writes.addJob {
            saved.write { $0.append("rows") }
            JobQueue.current?.addJob { saved.write { $0.append("index") } }  // OperationQueue.current
        }
        writes.addJob { saved.write { $0.append("log") } }
        let pending = writes.jobs.count  // operations, in the order added: 2
        writes.isSuspended = false
        await writes.allJobsFinished()  // saved.value: rows, log, index

        #expect(pending == 2)
        #expect(saved.value == ["rows", "log", "index"])
    }

    @Test("A dependent job reads its dependency's typed result, and a job of the main queue shows it")
    func typedResults() async throws {
        let queue = JobQueue(name: "import", maxConcurrentJobs: 4)
        let download = ResultJob(name: "download") { try fetchArchive() }
        let unpack = ResultJob(name: "unpack") { try unpackArchive(download.result.get()) }
        try unpack.addDependency(download)
        try queue.add([download, unpack])
        let files = try await unpack.value
        let show = JobQueue.main.addMainActorJob { showFiles(files) }  // OperationQueue.main.addOperation
        await show.finished()

        #expect(files == ["README.md", "Package.swift", "main.swift"])
        #expect(download.state.isFinished)
        #expect(await shownFiles == files)
    }

    @Test("A cycle is refused with the jobs on it, the graph is unchanged, and the queue runs to the end")
    func cycleIsAnError() async throws {
        let queue = JobQueue(name: "import", maxConcurrentJobs: 4)
        let download = ResultJob(name: "download") { try fetchArchive() }
        let unpack = ResultJob(name: "unpack") { try unpackArchive(download.result.get()) }
        try unpack.addDependency(download)

        let cycle = try #require(link(download, after: unpack))
        #expect(cycle.hasPrefix("adding this dependency would close the cycle download → unpack → download"))
        #expect(cycle.contains("Do not make download wait for unpack"))
        let loop = try #require(link(unpack, after: unpack))
        #expect(loop.hasPrefix("unpack cannot depend on itself"))
        #expect(download.dependencies.isEmpty)
        #expect(unpack.dependencies.map(\.description) == ["download"])

        try queue.add([download, unpack])
        #expect(try await unpack.value.count == 3)
        await queue.allJobsFinished()
        #expect(queue.jobCount == 0)
    }

    @Test("Among ready jobs the higher priority starts first", arguments: 1...3)
    func priorities(round: Int) async throws {
        let log = Protected([String]())
        let serial = JobQueue(name: "thumbnails", maxConcurrentJobs: 1)
        serial.isSuspended = true
        serial.addJob(priority: .low) { log.write { $0.append("low") } }
        serial.addJob(priority: .high) { log.write { $0.append("high") } }
        serial.addJob { log.write { $0.append("normal") } }
        serial.isSuspended = false
        await serial.allJobsFinished()  // log.value: high, normal, low

        #expect(log.value == ["high", "normal", "low"])
    }

    @Test("A job cancelled before it starts never runs, and its dependent is cancelled with the reason")
    func cancellationTravels() async throws {
        let queue = JobQueue(name: "import", maxConcurrentJobs: 4)

        let fetch = ResultJob(name: "fetch") { try fetchArchive() }
        let extract = ResultJob(name: "extract") { try unpackArchive(fetch.result.get()) }
        try extract.addDependency(fetch)
        fetch.cancel()  // before it starts: neither body runs
        try queue.add([fetch, extract])
        await queue.allJobsFinished()  // extract.state: finished(cancelled(dependency fetch was cancelled))

        #expect(fetch.state.description == "finished(cancelled(requested))")
        #expect(extract.state.description == "finished(cancelled(dependency fetch was cancelled))")
        #expect(throws: JobError.cancelled(job: "extract", reason: "dependency fetch was cancelled")) {
            try extract.result
        }
    }

    @Test("A failed dependency cancels its dependent; with the .run policy the dependent runs anyway")
    func failureTravels() async throws {
        let queue = JobQueue(name: "import", maxConcurrentJobs: 4)
        let download = ResultJob(name: "download") { () throws -> Data in throw EmptyArchive() }
        let unpack = ResultJob(name: "unpack") { try unpackArchive(download.result.get()) }
        let cleanup = ResultJob(name: "cleanup") { "cleaned" }
        cleanup.dependencyFailurePolicy = .run
        try unpack.addDependency(download)
        try cleanup.addDependency(download)
        try queue.add([download, unpack, cleanup])
        await queue.allJobsFinished()

        #expect(unpack.state.description == "finished(cancelled(dependency download failed: EmptyArchive()))")
        #expect(try await cleanup.value == "cleaned")
    }
}
