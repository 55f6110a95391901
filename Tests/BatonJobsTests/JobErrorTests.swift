import BatonJobs
import Testing

/// `JobError` as callers use it: compared whole or by code, its details read, described.
@Suite struct JobErrorTests {
    @Test func errorsAreEqualWhenCodeAndDetailsAre() {
        let notReady = JobError.notReady(job: "a", unfinishedDependencies: 2)
        #expect(notReady == .notReady(job: "a", unfinishedDependencies: 2))
        #expect(notReady != .notReady(job: "a", unfinishedDependencies: 1))
        #expect(JobError.alreadyFinished(job: "a") != .alreadyExecuting(job: "a"))
        #expect(JobError.alreadyFinished(job: "a") != .alreadyFinished(job: "b"))
        #expect(JobError.alreadyAdded(job: "a", queue: "q") != .ownedByQueue(job: "a", queue: "q"))
        #expect(JobError.dependencyCycle(cycle: ["A", "B"]) != .dependencyCycle(cycle: ["B", "A"]))
        #expect(JobError.cancelled(job: "a", reason: "requested") != .cancelled(job: "a", reason: "other"))
        let errors: Set<JobError> = [.selfDependency(job: "a"), .selfDependency(job: "a"), .notFinished(job: "a")]
        #expect(errors.count == 2)
    }

    @Test func codesAndPayloadsAreReadable() {
        let cycle = JobError.dependencyCycle(cycle: ["C", "A", "B"])
        #expect(cycle.code == .dependencyCycle)
        #expect(cycle.cycle == ["C", "A", "B"])
        #expect(cycle.job == "C")
        #expect(cycle.queue == nil)
        #expect(cycle.unfinishedDependencies == nil)

        let notReady = JobError.notReady(job: "waiting", unfinishedDependencies: 2)
        #expect(notReady.code == .notReady)
        #expect(notReady.job == "waiting")
        #expect(notReady.unfinishedDependencies == 2)
        #expect(notReady.cycle == nil)

        let owned = JobError.ownedByQueue(job: "queued", queue: "owner")
        #expect(owned.code == .ownedByQueue)
        #expect(owned.queue == "owner")
        #expect(JobError.alreadyAdded(job: "once", queue: "other").queue == "other")

        let cancelled = JobError.cancelled(job: "cancelled", reason: "requested")
        #expect(cancelled.code == .cancelled)
        #expect(cancelled.reason == "requested")
        #expect(cancelled.underlyingError == nil)

        #expect(JobError.selfDependency(job: "loner").code == .selfDependency)
        #expect(JobError.alreadyFinished(job: "done").code == .alreadyFinished)
        #expect(JobError.alreadyExecuting(job: "busy").code == .alreadyExecuting)
        #expect(JobError.notFinished(job: "later").code == .notFinished)
        #expect(JobError.notFinished(job: "later").reason == nil)
        #expect(JobError.Code.dependencyCycle.description == "dependencyCycle")
    }

    @Test func switchOnCodeWithADefault() {
        func advice(_ error: JobError) -> String {
            switch error.code {
            case .dependencyCycle, .selfDependency: "fix the graph"
            case .notReady: "wait"
            default: "other"
            }
        }
        #expect(advice(.dependencyCycle(cycle: ["A", "B"])) == "fix the graph")
        #expect(advice(.selfDependency(job: "A")) == "fix the graph")
        #expect(advice(.notReady(job: "A", unfinishedDependencies: 1)) == "wait")
        #expect(advice(.alreadyFinished(job: "A")) == "other")
    }

    @Test func descriptionsSayWhatHappenedAndWhatToDo() {
        let cycle = JobError.dependencyCycle(cycle: ["C", "A", "B"]).description
        #expect(cycle.contains("C → A → B → C"))
        #expect(cycle.contains("Do not make C wait for A"))
        #expect(cycle.contains("A waiting for B"))
        let two = JobError.dependencyCycle(cycle: ["B", "A"]).description
        #expect(two.contains("B → A → B"))
        #expect(two.contains("A waiting for B"))
        let notReady = JobError.notReady(job: "waiting", unfinishedDependencies: 2).description
        #expect(notReady.contains("2 of its dependencies"))
        #expect(notReady.contains("add the job to a JobQueue"))
        #expect(JobError.selfDependency(job: "loner").description.contains("loner cannot depend on itself"))
        #expect(JobError.alreadyAdded(job: "once", queue: "other").description.contains("create a new job"))
        #expect(JobError.ownedByQueue(job: "queued", queue: "owner").description.contains("let the queue run it"))
        #expect(JobError.notFinished(job: "later").description.contains("waitUntilFinished()"))
        #expect(JobError.cancelled(job: "c", reason: "requested").description.contains("c was cancelled (requested)"))
    }

    /// A job cancelled because a dependency failed: its result's error carries the dependency's
    /// error, and still equals the error built from the reason's text.
    @Test func cancelledByAFailedDependencyCarriesItsError() throws {
        let failing = BlockJob(name: "failing") { throw TestError(id: 4) }
        let reader = ResultJob<Int, Never>(name: "reader") { 1 }
        try reader.addDependency(failing)
        let queue = JobQueue(name: "causes")
        try queue.add([failing, reader])
        #expect(drain(queue))
        let error = #expect(throws: JobError.self) { try reader.result }
        #expect(error?.code == .cancelled)
        #expect(error?.job == "reader")
        #expect(error?.underlyingError as? TestError == TestError(id: 4))
        let reason = try #require(error?.reason)
        #expect(reason.contains("failing"))
        #expect(error == .cancelled(job: "reader", reason: reason))
        #expect(error?.description.contains("dependency failing failed") == true)
    }

    /// Every payload takes part in `==` and in the hash: of these errors, each pair that differs
    /// in one detail (the code, the job, the queue, the cycle, the count, the reason) is unequal,
    /// and each error made again is equal to the first and hashes alike.
    @Test func everyDetailIsCompared() {
        func all() -> [JobError] {
            [
                .selfDependency(job: "a"), .selfDependency(job: "b"),
                .dependencyCycle(cycle: ["a", "b"]), .dependencyCycle(cycle: ["a", "c"]),
                .dependencyCycle(cycle: ["a", "b", "c"]),
                .alreadyAdded(job: "a", queue: "q"), .alreadyAdded(job: "a", queue: "r"),
                .alreadyAdded(job: "b", queue: "q"),
                .alreadyFinished(job: "a"), .alreadyFinished(job: "b"),
                .alreadyExecuting(job: "a"), .alreadyExecuting(job: "b"),
                .notReady(job: "a", unfinishedDependencies: 1), .notReady(job: "a", unfinishedDependencies: 2),
                .notReady(job: "b", unfinishedDependencies: 1),
                .ownedByQueue(job: "a", queue: "q"), .ownedByQueue(job: "a", queue: "r"),
                .ownedByQueue(job: "b", queue: "q"),
                .cancelled(job: "a", reason: "requested"), .cancelled(job: "a", reason: "timed out"),
                .cancelled(job: "b", reason: "requested"),
                .notFinished(job: "a"), .notFinished(job: "b"),
                .queueShutDown(job: "a", queue: "q"), .queueShutDown(job: "a", queue: "r"),
                .queueShutDown(job: "b", queue: "q"),
            ]
        }
        let errors = all()
        for (i, lhs) in errors.enumerated() {
            for (j, rhs) in errors.enumerated() where i != j {
                #expect(lhs != rhs, "\(lhs.code) \(lhs.job) equals \(rhs.code) \(rhs.job)")
            }
        }
        for (error, again) in zip(errors, all()) {
            #expect(error == again)
            #expect(error.hashValue == again.hashValue)
        }
        #expect(Set(errors).count == errors.count)
    }
}
