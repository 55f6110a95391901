import Testing

@testable import BatonJobs

/// What a job's state machine decides, as values: the transitions are driven one by one on a
/// `JobStateMachine` (and a `QueueStateMachine`) of their own, no job runs and no thread is
/// started, and each test reads the actions returned.
@Suite struct JobStateMachineTests {
    struct Failure: Error {}

    /// A machine that stands for a job in `queue`: the transitions only ask whether the job has
    /// a queue, and never touch it.
    private func queued(in queue: JobQueue, priority: JobPriority = .normal) -> JobStateMachine {
        var machine = JobStateMachine(priority: priority)
        machine.queueReference = Unmanaged.passUnretained(queue.core)
        machine.linked = true
        return machine
    }

    /// A queued machine that waits for `count` unfinished dependencies.
    private func waiting(for count: Int32, in queue: JobQueue) -> JobStateMachine {
        var machine = queued(in: queue)
        machine.unfinishedDependencies = count
        guard case .wait = machine.enqueued() else {
            Issue.record("a job with unfinished dependencies must wait")
            return machine
        }
        return machine
    }

    private func reason(_ action: JobStateMachine.DependencyFinishedAction) -> JobCancellationReason? {
        if case .finishCancelled(let reason) = action { return reason }
        return nil
    }

    // MARK: The life of a job

    @Test func aJobOnTheInboxIsReadyAtItsPriorityAndBecomesAMemberWhenTakenIn() {
        let queue = JobQueue(name: "inbox")
        var machine = JobStateMachine(priority: .high)
        machine.enterInbox(of: Unmanaged.passUnretained(queue.core))
        #expect(machine.queueReference?.toOpaque() == Unmanaged.passUnretained(queue.core).toOpaque())
        #expect(machine.linked && machine.inInbox)
        guard case .ready(let level) = machine.phase else {
            Issue.record("a job on the inbox must be ready, not \(machine.phase)")
            return
        }
        #expect(level == .high)
        machine.leaveInbox()
        #expect(!machine.inInbox && machine.linked)
    }

    @Test func aJobWithoutDependenciesGoesReadyRunningFinishedFinalized() {
        let queue = JobQueue(name: "life")
        var machine = queued(in: queue, priority: .high)
        guard case .makeReady = machine.enqueued() else {
            Issue.record("a job without dependencies must be made ready")
            return
        }
        let (level, observers) = machine.makeReady(emit: true)
        #expect(level == .high)
        #expect(observers == .none)  // nobody observes it
        #expect(machine.state.description == "ready")
        #expect(machine.startExecuting() == .none)
        #expect(machine.state.description == "executing")
        #expect(machine.ran)
        let (action, leftReady) = machine.finish(.succeeded)
        #expect(action == .finalize)
        #expect(!leftReady)
        #expect(machine.isFinished)
        #expect(!machine.finalized)
        guard let finalization = machine.finalize() else {
            Issue.record("a finished job must be finalized once")
            return
        }
        #expect(finalization.outcome.outcome.isSucceeded)
        #expect(!finalization.releasesBody)  // it ran: its runner released the body
        #expect(!finalization.hasExtras)
        #expect(finalization.queue?.takeUnretainedValue() === queue.core)
        #expect(machine.finalized)
        #expect(machine.queueReference == nil)
        #expect(machine.finalize() == nil)  // exactly once
    }

    @Test func aReadyJobThatFinishesUnrunLeavesTheReadyCountAndReleasesItsBody() {
        let queue = JobQueue(name: "unrun")
        var machine = queued(in: queue)
        _ = machine.makeReady(emit: false)
        guard case .finish(let reason) = machine.cancel(), case .requested = reason else {
            Issue.record("cancelling a ready job in a queue must finish it as cancelled")
            return
        }
        let (action, leftReady) = machine.finish(.cancelled(reason))
        #expect(action == .finalize)
        #expect(leftReady)
        #expect(machine.finalize()?.releasesBody == true)
    }

    @Test func observersHearTheFinishBeforeTheJobIsFinalized() {
        var machine = JobStateMachine(priority: .normal)
        #expect(machine.addObserver { _ in } == .drainOutbox)
        #expect(machine.addObserver { _ in } == .none)  // this thread delivers already
        #expect(machine.takeOutbox().count == 2)  // the current state, for each observer
        #expect(machine.takeOutbox().isEmpty)  // and it is no longer the deliverer
        #expect(machine.startExecuting() == .drainOutbox)
        _ = machine.takeOutbox()
        _ = machine.takeOutbox()
        let (action, _) = machine.finish(.failed(Failure()))
        #expect(action == .drainOutbox)
        let outbox = machine.takeOutbox()
        guard outbox.count == 2, case .state(.finished(.failed), let observers) = outbox[0], case .finalize = outbox[1]
        else {
            Issue.record("the outbox must hold the finished state, then the finalize step: \(outbox)")
            return
        }
        #expect(observers.count == 2)
        #expect(machine.finalize()?.outcome.outcome.isSucceeded == false)
        #expect(machine.takeWaiters().isEmpty)
    }

    // MARK: Cancellation

    @Test func aCancellationReplacesASuccessButNotAFailure() {
        var running = JobStateMachine(priority: .normal)
        _ = running.startExecuting()
        guard case .cancelBody = running.cancel() else {
            Issue.record("cancelling a running job must tell its body")
            return
        }
        _ = running.finish(.succeeded)
        guard case .cancelled(.requested)? = running.finalize()?.outcome.outcome else {
            Issue.record("a cancelled job whose body succeeded finishes as cancelled")
            return
        }
        var failing = JobStateMachine(priority: .normal)
        _ = failing.startExecuting()
        _ = failing.cancel()
        _ = failing.finish(.failed(Failure()))
        guard case .failed? = failing.finalize()?.outcome.outcome else {
            Issue.record("a cancelled job whose body failed finishes as failed")
            return
        }
        #expect(failing.cancel() == .none)  // finished: nothing to do
    }

    @Test func aJobCancelledOutsideAQueueFinishesWhenAddedOrStarted() {
        var machine = JobStateMachine(priority: .normal)
        #expect(machine.cancel() == .none)
        #expect(machine.cancellation != nil)
        var started = machine
        guard case .finishCancelled(.requested) = started.startOutsideQueue() else {
            Issue.record("starting a cancelled job must finish it as cancelled")
            return
        }
        guard case .finishCancelled(.requested) = machine.enqueued() else {
            Issue.record("adding a cancelled job must finish it as cancelled")
            return
        }
    }

    // MARK: Dependencies

    @Test func aJobIsReadyOnlyWhenItsLastDependencyFinishes() {
        let queue = JobQueue(name: "deps")
        let first = BlockJob(name: "first") {}
        let second = BlockJob(name: "second") {}
        var machine = waiting(for: 3, in: queue)
        #expect(machine.dependencyFinished(first, .init(.succeeded)) == .none)
        #expect(machine.dependencyFinished(second, .init(.succeeded)) == .none)
        #expect(machine.state.description == "pending")
        #expect(machine.dependencyFinished(second, .init(.succeeded)) == .makeReady)
    }

    @Test func finalizingHandsOnTheDependentsAndWatchersOnce() {
        let queue = JobQueue(name: "hand-on")
        let dependents = [BlockJob(name: "a") {}, BlockJob(name: "b") {}]
        let watcher = BlockJob(name: "watcher") {}
        var machine = queued(in: queue)
        for dependent in dependents { machine.listDependent(dependent, strongly: true) }
        machine.listDependent(watcher, strongly: false)
        _ = machine.makeReady(emit: false)
        _ = machine.startExecuting()
        _ = machine.finish(.succeeded)
        guard let finalization = machine.finalize(), finalization.hasExtras else {
            Issue.record("a job with a watcher must be finalized with its extras")
            return
        }
        let (first, rest) = machine.takeDependents()
        #expect(first == nil)
        #expect(rest.map(\.name) == ["a", "b"])
        #expect(machine.takeWatchers().map { $0.job?.name } == ["watcher"])
        #expect(machine.takeDependents().first == nil && machine.takeDependents().rest.isEmpty)
        #expect(machine.takeWatchers().isEmpty)
        #expect(machine.finalize() == nil)
    }

    @Test func theFailurePolicyDecidesWhatAFailedDependencyDoes() {
        let queue = JobQueue(name: "policy")
        let upstream = BlockJob(name: "upstream") {}
        var cancels = waiting(for: 2, in: queue)
        guard
            case .dependencyFailed(let job, _)? = reason(
                cancels.dependencyFinished(upstream, .init(.failed(Failure()))))
        else {
            Issue.record("a failed dependency must cancel a job whose policy is .cancel")
            return
        }
        #expect(job == "upstream")
        var runs = waiting(for: 2, in: queue)
        runs.failurePolicy = .run
        #expect(runs.dependencyFinished(upstream, .init(.failed(Failure()))) == .none)
        #expect(runs.dependencyFinished(upstream, .init(.cancelled(.requested))) == .makeReady)
        #expect(runs.cancellation == nil)
        // A cancelled dependency's own cause is passed on unchanged.
        var passes = waiting(for: 1, in: queue)
        let cause = JobCancellationReason.dependencyCancelled(job: "root")
        guard case .dependencyCancelled("root")? = reason(passes.dependencyFinished(upstream, .init(.cancelled(cause))))
        else {
            Issue.record("the root cause of a cancellation must be passed on")
            return
        }
    }

    @Test func addingAndRemovingDependencies() {
        let queue = JobQueue(name: "edges")
        let done = BlockJob(name: "done") {}
        _ = done.machine.startExecuting()
        _ = done.machine.finish(.succeeded)
        _ = done.machine.finalize()
        let open = BlockJob(name: "open") {}
        var machine = queued(in: queue)
        _ = machine.makeReady(emit: false)
        #expect(machine.addDependency(done) == .kept)
        #expect(machine.addDependency(open) == .checkCycle)
        guard case .list(strongly: true, leftReady: true, observers: .none) = machine.addUnfinishedDependency(open)
        else {
            Issue.record("a ready job in a queue that gets a dependency goes back to waiting, listed strongly")
            return
        }
        #expect(machine.state.description == "pending")
        #expect(machine.dependencies.count == 2)
        guard case .unlist(strongly: true, then: .makeReady) = machine.removeDependency(open) else {
            Issue.record("removing the last unfinished dependency makes the job ready")
            return
        }
        _ = machine.startExecuting()
        #expect(machine.addDependency(open) == .refused(.executing))
        #expect(machine.removeDependency(done) == .none)
    }

    @Test func priorityIsInheritedUpwardOnlyAndRequeuesAReadyJob() {
        let queue = JobQueue(name: "priority")
        var machine = queued(in: queue, priority: .normal)
        _ = machine.makeReady(emit: false)
        #expect(machine.inherit(.low) == .unchanged)
        #expect(machine.inherit(.high) == .requeue(.high))
        #expect(machine.effectivePriority == .high)
        let (requeue, effective) = machine.setOwnPriority(.veryHigh)
        #expect(requeue == .veryHigh && effective == .veryHigh)
        var idle = JobStateMachine(priority: .low)
        #expect(idle.inherit(.normal) == .raised)
        _ = idle.startExecuting()
        #expect(idle.inherit(.veryHigh) == .unchanged)
    }

    // MARK: Admission

    @Test func admissionStartsWorkersOnlyForReadyJobsWithinTheLimit() {
        var queue = QueueStateMachine()
        queue.readyCount = 5
        #expect(queue.admitWorkers(limit: 2) == 2)
        #expect(queue.active == 2 && queue.searching == 2)
        #expect(queue.admitWorkers(limit: 2) == 0)  // every slot taken
        queue = QueueStateMachine()
        queue.readyCount = 1
        #expect(queue.admitWorkers(limit: 4) == 1)  // one ready job: one worker
        queue.readyCount = 3
        queue.suspended = true
        #expect(queue.admitWorkers(limit: 4) == 0)
    }

    @Test func aWorkerTakesTheHighestPriorityJobOrGivesItsSlotBack() {
        let low = BlockJob(name: "low") {}
        let high = BlockJob(name: "high") {}
        var queue = QueueStateMachine()
        for job in [low, high] {
            let (level, _) = job.machine.makeReady(emit: false)
            queue.pushReady(job, level)
        }
        low.machine.ownPriority = .low
        high.machine.ownPriority = .high
        queue.pushReady(low, .low)
        low.machine.phase = .ready(.low)  // its .normal entry is stale now
        queue.pushReady(high, .high)
        high.machine.phase = .ready(.high)
        queue.readyCount = 2
        #expect(queue.admitWorkers(limit: 1) == 1)
        #expect(queue.takeNext() === high)
        queue.startSearching()
        #expect(queue.takeNext() === low)
        queue.startSearching()
        #expect(queue.takeNext() == nil)
        #expect(queue.active == 0 && queue.searching == 0)
    }
}

// Equality of the actions that carry a cancellation reason, for the expectations above: by case,
// and by the reason's description.

extension JobStateMachine.DependencyFinishedAction: Equatable {
    public static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.none, .none), (.makeReady, .makeReady), (.drainOutbox, .drainOutbox): true
        case (.finishCancelled(let left), .finishCancelled(let right)): left.description == right.description
        default: false
        }
    }
}

extension JobStateMachine.AddDependencyAction: Equatable {
    public static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.kept, .kept), (.checkCycle, .checkCycle): true
        case (.refused(let left), .refused(let right)): left == right
        case (.finishCancelled(let left), .finishCancelled(let right)): left.description == right.description
        default: false
        }
    }
}

extension JobStateMachine.CancelAction: Equatable {
    public static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.none, .none), (.cancelBody, .cancelBody): true
        case (.finish(let left), .finish(let right)): left.description == right.description
        default: false
        }
    }
}

extension JobStateMachine.RemoveDependencyAction: Equatable {
    public static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.none, .none): true
        case (.unlist(let left, let leftThen), .unlist(let right, let rightThen)):
            left == right && leftThen == rightThen
        default: false
        }
    }
}
