#if BATON_MODEL_CHECK && !canImport(Darwin)
@_spi(ModelChecking) import BatonFutures
@_spi(ModelChecking) import BatonLocks
import BatonModelChecking
import BatonTestSupport
import Testing

/// What the program's threads record. Only the thread holding the scheduler's turn runs, and
/// the turn passes through semaphores, so plain fields are safe.
final class Record: @unchecked Sendable {
    var won: [Bool] = [false, false]
    var callbackOutcomes: [Result<Int, any Error>] = []
    var readerSawCompleted = false
    var readerResult: Result<Int, any Error>?
}

extension ModelProgram {
    /// Schedules the steps on this future's completion flag (and the write of its outcome), and
    /// gives the execution's futures a lock of its own in place of their shared lock stripes.
    mutating func watch<Value>(_ future: Future<Value>, as name: String = "future") {
        watch(word: future.modelCheckWord, as: "\(name).completed")
        substituteLock(for: Future<Value>.modelCheckLockName)
    }
}

/// `Future`'s completion under every interleaving of two completers and an observer, up to two
/// preemptions: it completes exactly once, every callback sees that one outcome, and a reader
/// without the lock never sees it completed without its outcome (the seeded bug
/// `future-flag-before-outcome` breaks that).
@Suite(.serialized, .offTheCooperativePool, .timeLimit(.minutes(5)))
struct FutureModelCheckTests {
    func program(_ program: inout ModelProgram) {
        let promise = Promise<Int>()
        let future = promise.future
        let record = Record()
        program.watch(future)
        program.thread { _ in record.won[0] = promise.tryComplete(with: .success(1)) }
        program.thread { _ in record.won[1] = promise.tryComplete(with: .success(2)) }
        program.thread { m in
            // Lock-free first: once the flag says completed, the outcome must be there.
            let completed = future.isCompleted
            let result = future.result
            m.expect(!completed || result != nil, "isCompleted was true but result was nil")
            record.readerSawCompleted = completed
            record.readerResult = result
            future.whenComplete { record.callbackOutcomes.append($0) }
        }
        program.atEnd { m in
            m.expect(record.won.filter { $0 }.count == 1, "winners: \(record.won)")
            let value = try? future.result?.get()
            m.expect(value == (record.won[0] ? 1 : 2), "the future holds \(String(describing: value))")
            m.expect(record.callbackOutcomes.count == 1, "\(record.callbackOutcomes.count) callbacks ran")
            m.expect(record.callbackOutcomes.allSatisfy { (try? $0.get()) == value }, "a callback saw another outcome")
            if let seen = record.readerResult { m.expect((try? seen.get()) == value, "the reader saw another outcome") }
        }
    }

    @Test func completesOnceAndEveryObserverSeesTheOutcome() {
        let report = ModelChecker().check(program)
        #expect(report.failure == nil, "\(report)")
        #expect(report.exhausted, "\(report)")
        print("FutureModelCheckTests: \(report)")
    }
}
#elseif BATON_MODEL_CHECK
import Testing

/// The model checker drives the futex words of Baton's Linux locks; on Darwin it cannot run.
@Suite struct FutureModelCheckTests {
    @Test(.disabled("the model checker runs on Linux only: on Darwin the locks are os_unfair_lock"))
    func modelCheckerRunsOnLinuxOnly() {}
}
#endif
