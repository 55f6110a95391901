import BatonFutures
import BatonLocks
import Foundation
import Testing

@Suite struct FlatMapErrorAndAllSettledTests {
    // MARK: flatMapError

    @Test func flatMapErrorRecoversWithAFuture() async throws {
        let recovered = Future<Int>.failed(TestError(1)).flatMapError { error in
            Future<Int> { promise in
                DispatchQueue.global().async { promise.succeed((error as? TestError)?.tag ?? -1) }
            }
        }
        #expect(try await recovered.expectValue() == 1)
    }

    @Test func flatMapErrorPassesAValueThroughWithoutCallingTheTransform() async throws {
        let calls = Protected(0)
        let passed = Future.succeeded(7).flatMapError { _ -> Future<Int> in
            calls.write { $0 += 1 }
            return .succeeded(-1)
        }
        #expect(try await passed.expectValue() == 7)
        #expect(calls.value == 0)
    }

    @Test func flatMapErrorFailsWithWhatTheTransformThrowsOrItsFutureFailsWith() async {
        let thrown = Future<Int>.failed(TestError(1)).flatMapError { _ -> Future<Int> in throw TestError(2) }
        #expect(await thrown.expectError() as? TestError == TestError(2))
        let failedAgain = Future<Int>.failed(TestError(1)).flatMapError { _ in Future<Int>.failed(TestError(3)) }
        #expect(await failedAgain.expectError() as? TestError == TestError(3))
    }

    @Test func aCancelledSourceIsNotRecovered() async {
        let calls = Protected(0)
        let source = Promise<Int>()
        let recovered = source.future.flatMapError { _ -> Future<Int> in
            calls.write { $0 += 1 }
            return .succeeded(0)
        }
        source.future.cancel()
        #expect(await recovered.expectError() is CancellationError)
        #expect(calls.value == 0)
    }

    @Test func cancellingTheNewFutureCancelsTheSourceAndTheRecovery() async {
        let source = Promise<Int>()
        let pending = source.future.flatMapError { _ in Future<Int>.succeeded(0) }
        pending.cancel()
        #expect(source.isCancelled)
        #expect(await pending.expectError() is CancellationError)

        let recovery = Promise<Int>()
        let recovering = Future<Int>.failed(TestError(1)).flatMapError { _ in recovery.future }
        recovering.cancel()
        #expect(recovery.isCancelled)
        #expect(await recovering.expectError() is CancellationError)
    }

    // MARK: allSettled

    @Test func allSettledOfNothingIsAnEmptyArray() async throws {
        #expect(try await Future<Int>.allSettled([]).expectValue().isEmpty)
    }

    @Test func allSettledKeepsEveryOutcomeInInputOrderAndNeverFails() async throws {
        let late = Promise<Int>()
        let inputs: [Future<Int>] = [.succeeded(1), .failed(TestError(2)), late.future, .failed(TestError(4))]
        let settled = Future.allSettled(inputs)
        #expect(!settled.isCompleted)  // waits for the last input, despite the failures
        #expect(inputs.allSatisfy { !$0.isCancelled })
        late.succeed(3)
        let outcomes = try await settled.expectValue()
        #expect(outcomes.count == 4)
        #expect(try outcomes[0].get() == 1)
        #expect(try outcomes[2].get() == 3)
        #expect(outcomes[1].error as? TestError == TestError(2))
        #expect(outcomes[3].error as? TestError == TestError(4))
    }

    @Test func cancellingAllSettledCancelsNoInput() async throws {
        let shared = Promise<Int>()
        let settled = Future.allSettled([shared.future, .succeeded(1)])
        settled.cancel()
        #expect(await settled.expectError() is CancellationError)
        #expect(!shared.isCancelled)
        shared.succeed(5)
        #expect(try shared.future.result?.get() == 5)
    }

    @Test(.timeLimit(.minutes(1)), arguments: 1...5)
    func allSettledOverInputsCompletedOnRacingThreads(round: Int) async throws {
        let count = 400
        let promises = (0..<count).map { _ in Promise<Int>() }
        let settled = Future.allSettled(promises.map(\.future))
        await raceThreads(
            (0..<4).map { thread in
                {
                    for index in stride(from: thread, to: count, by: 4) {
                        if index % 3 == 0 {
                            promises[index].fail(TestError(index))
                        } else {
                            promises[index].succeed(index)
                        }
                    }
                }
            })
        let outcomes = try await settled.expectValue()
        #expect(outcomes.count == count)
        for (index, outcome) in outcomes.enumerated() {
            if index % 3 == 0 {
                #expect(outcome.error as? TestError == TestError(index))
            } else {
                #expect(try outcome.get() == index)
            }
        }
    }
}

extension Result {
    /// The error, if this is a failure.
    fileprivate var error: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
