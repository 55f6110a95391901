import BatonFutures
import Foundation
import Testing

@Suite struct CombinatorTests {
    // MARK: map, flatMap, recover

    @Test func mapTransformsValuesAndPassesErrorsOn() async throws {
        #expect(try await Future.succeeded(2).map { $0 * 10 }.expectValue() == 20)
        #expect(await Future<Int>.failed(TestError(1)).map { $0 * 10 }.expectError() as? TestError == TestError(1))
        #expect(
            await Future.succeeded(2).map { _ -> Int in throw TestError(2) }.expectError() as? TestError == TestError(2)
        )
    }

    @Test func cancellingAMapCancelsItsSource() async {
        let source = Promise<Int>()
        let sourceCancelled = Promise<Void>()
        source.onCancel { sourceCancelled.succeed() }
        let mapped = source.future.map { $0 + 1 }.map { $0 * 2 }
        mapped.cancel()
        #expect(await mapped.expectError() is CancellationError)
        #expect((try? await sourceCancelled.future.expectValue()) != nil)
        #expect(source.isCancelled)
    }

    @Test func flatMapChainsFutures() async throws {
        let value = try await Future.succeeded(3).flatMap { value in
            Future<String> { promise in DispatchQueue.global().async { promise.succeed("v\(value)") } }
        }.expectValue()
        #expect(value == "v3")
        let failed = Future.succeeded(3).flatMap { _ -> Future<Int> in .failed(TestError(4)) }
        #expect(await failed.expectError() as? TestError == TestError(4))
        let upstream = Future<Int>.failed(TestError(5)).flatMap { Future.succeeded($0) }
        #expect(await upstream.expectError() as? TestError == TestError(5))
    }

    @Test func cancellingAFlatMapCancelsTheInnerFuture() async {
        let inner = Promise<Int>()
        let started = Promise<Void>()
        let chained = Future.succeeded(1).flatMap { _ in
            started.succeed()
            return inner.future
        }
        #expect((try? await started.future.expectValue()) != nil)
        chained.cancel()
        #expect(inner.isCancelled)
        #expect(await chained.expectError() is CancellationError)
    }

    @Test func recoverTurnsErrorsIntoValues() async throws {
        #expect(try await Future<Int>.failed(TestError(1)).recover { _ in -1 }.expectValue() == -1)
        #expect(try await Future.succeeded(5).recover { _ in -1 }.expectValue() == 5)
        let rethrown = Future<Int>.failed(TestError(1)).recover { _ in throw TestError(9) }
        #expect(await rethrown.expectError() as? TestError == TestError(9))
    }

    @Test func aSharedViewsCancellationDoesNotReachTheSource() async throws {
        let source = Promise<Int>()
        let impatient = source.future.shared().timeout(after: .milliseconds(10))
        #expect(await impatient.expectError() as? FutureError == .timedOut(after: .milliseconds(10)))
        #expect(!source.isCancelled)
        let patientView = source.future.shared()
        source.succeed(3)
        #expect(try await patientView.expectValue() == 3)
    }

    // MARK: timeout

    @Test func timeoutFailsAndCancelsTheSlowFuture() async {
        let slow = Promise<Int>()
        let timed = slow.future.timeout(after: .milliseconds(20))
        let error = await timed.expectError()
        #expect(error as? FutureError == .timedOut(after: .milliseconds(20)))
        #expect(slow.isCancelled)
    }

    @Test func timeoutPassesAnEarlyOutcomeThrough() async throws {
        #expect(try await Future.succeeded(1).timeout(after: .seconds(60)).expectValue() == 1)
        let failing = Future<Int>.failed(TestError(2)).timeout(after: .seconds(60))
        #expect(await failing.expectError() as? TestError == TestError(2))
    }

    @Test func cancellingATimeoutCancelsTheSource() async {
        let source = Promise<Int>()
        let timed = source.future.timeout(after: .seconds(60))
        timed.cancel()
        #expect(source.isCancelled)
        #expect(await timed.expectError() is CancellationError)
    }

    /// A combination still waiting on work that never finishes, and that work's promises.
    enum Stuck: String, CaseIterable, Sendable {
        case map, flatMap, recover, zip2, zip3, all, race, any, retry

        /// The combination and the promises it waits on; each was started and none completes.
        func make() -> (Future<Int>, [Promise<Int>]) {
            let pending = (0..<2).map { _ in Promise<Int>() }
            let (a, b) = (pending[0].future, pending[1].future)
            switch self {
            case .map: return (a.map { $0 + 1 }, [pending[0]])
            case .flatMap: return (Future.succeeded(1).flatMap { _ in a }, [pending[0]])
            case .recover: return (a.recover { _ in 0 }, [pending[0]])
            case .zip2: return (zip(Future.succeeded(1), a).map { $0 + $1 }, [pending[0]])
            case .zip3: return (zip(a, Future.succeeded(1), b).map { $0 + $1 + $2 }, pending)
            case .all: return (Future.all([Future.succeeded(1), a, b]).map { $0.reduce(0, +) }, pending)
            case .race: return (Future.race([a, b]), pending)
            case .any: return (Future.any([.failed(TestError(1)), a, b]), pending)
            case .retry: return (Future.retry(attempts: 3) { a }, [pending[0]])
            }
        }
    }

    @Test(arguments: Stuck.allCases)
    func timeoutOverACombinationCancelsTheWorkItWaitsFor(_ stuck: Stuck) async {
        let (combined, pending) = stuck.make()
        let timed = combined.timeout(after: .milliseconds(20))
        #expect(await timed.expectError() as? FutureError == .timedOut(after: .milliseconds(20)))
        #expect(combined.isCancelled)
        #expect(pending.allSatisfy { $0.isCancelled }, "\(stuck): the stuck work was not cancelled")
    }

    // MARK: zip

    @Test func zipCombinesValues() async throws {
        let left = Promise<Int>()
        let right = Promise<String>()
        let both = zip(left.future, right.future)
        DispatchQueue.global().async { right.succeed("r") }
        DispatchQueue.global().async { left.succeed(1) }
        let (l, r) = try await both.expectValue()
        #expect(l == 1 && r == "r")
        let (a, b, c) = try await zip(Future.succeeded(1), Future.succeeded("b"), Future.succeeded(3.0)).expectValue()
        #expect(a == 1 && b == "b" && c == 3.0)
    }

    @Test func zipFailsFastAndCancelsTheSlowOne() async {
        // The slow side completes only if it is never cancelled, and only after the zip has
        // reported: ordering, not timing, shows the failure did not wait for it.
        let slow = Promise<Int>()
        let failing = Promise<Int>()
        let zipped = zip(slow.future, failing.future)
        DispatchQueue.global().async { failing.fail(TestError(7)) }
        #expect(await zipped.expectError() as? TestError == TestError(7))
        #expect(slow.isCancelled)
        slow.succeed(1)  // too late and ignored
        let three = zip(Promise<Int>().future, Future<Int>.failed(TestError(8)), Promise<Int>().future)
        #expect(await three.expectError() as? TestError == TestError(8))
    }

    @Test func cancellingAZipCancelsBothInputs() async {
        let a = Promise<Int>()
        let b = Promise<Int>()
        let zipped = zip(a.future, b.future)
        zipped.cancel()
        #expect(a.isCancelled && b.isCancelled)
        #expect(await zipped.expectError() is CancellationError)
    }

    // MARK: all

    @Test func allKeepsInputOrder() async throws {
        let promises = (0..<50).map { _ in Promise<Int>() }
        let all = Future.all(promises.map(\.future))
        for (index, promise) in promises.enumerated().reversed() {
            DispatchQueue.global().async { promise.succeed(index * index) }
        }
        #expect(try await all.expectValue() == (0..<50).map { $0 * $0 })
        #expect(try await Future<Int>.all([]).expectValue() == [])
    }

    @Test func allFailsFastAndCancelsTheRest() async {
        let slow = (0..<5).map { _ in Promise<Int>() }
        let failing = Promise<Int>()
        let all = Future.all(slow.map(\.future) + [failing.future, Future.succeeded(1)])
        DispatchQueue.global().async { failing.fail(TestError(3)) }
        #expect(await all.expectError() as? TestError == TestError(3))
        #expect(slow.allSatisfy { $0.isCancelled })
    }

    @Test func cancellingAllCancelsEveryInput() async {
        let inputs = (0..<4).map { _ in Promise<Int>() }
        let all = Future.all(inputs.map(\.future))
        all.cancel()
        #expect(inputs.allSatisfy { $0.isCancelled })
        #expect(await all.expectError() is CancellationError)
    }

    @Test func allOverCompletedInputsIsCompleteAtOnce() throws {
        let all = Future.all((0..<100).map { Future.succeeded($0 * 2) })
        // No callback, no hop: the result is there when `all` returns.
        #expect(try all.result?.get() == (0..<100).map { $0 * 2 })
    }

    @Test func allOverCompletedInputsFailsWithTheFirstFailureInInputOrder() {
        let all = Future.all([.succeeded(0), .failed(TestError(1)), .succeeded(2), .failed(TestError(3))])
        guard case .failure(let error)? = all.result else {
            Issue.record("expected a failure at once, got \(String(describing: all.result))")
            return
        }
        #expect(error as? TestError == TestError(1))
    }

    @Test func aFailureInTheCompletedPrefixCancelsThePendingInputs() {
        let pending = (0..<3).map { _ in Promise<Int>() }
        let all = Future.all([.succeeded(0), .failed(TestError(4))] + pending.map(\.future))
        guard case .failure(let error)? = all.result else {
            Issue.record("expected a failure at once, got \(String(describing: all.result))")
            return
        }
        #expect(error as? TestError == TestError(4))
        #expect(pending.allSatisfy { $0.isCancelled })
    }

    @Test func allJoinsACompletedPrefixWithInputsThatCompleteLater() async throws {
        // Completed, then pending, then completed again, then pending: the prefix is read at
        // once, the rest as it arrives, and the values keep the inputs' order.
        let second = Promise<Int>()
        let fourth = Promise<Int>()
        let all = Future.all([.succeeded(0), .succeeded(1), second.future, .succeeded(3), fourth.future])
        #expect(!all.isCompleted)
        fourth.succeed(4)
        #expect(!all.isCompleted)
        DispatchQueue.global().async { second.succeed(2) }
        #expect(try await all.expectValue() == [0, 1, 2, 3, 4])
    }

    @Test func aCompletedFailureAfterAPendingInputFailsAtOnce() {
        let pending = Promise<Int>()
        let all = Future.all([.succeeded(0), pending.future, .failed(TestError(5)), .succeeded(3)])
        guard case .failure(let error)? = all.result else {
            Issue.record("expected a failure at once, got \(String(describing: all.result))")
            return
        }
        #expect(error as? TestError == TestError(5))
        #expect(pending.isCancelled)
    }

    @Test func allOverManyAsyncFutures() async throws {
        let futures = (0..<10_000).map { index in
            Future<Int> { promise in DispatchQueue.global().async { promise.succeed(index) } }
        }
        #expect(try await Future.all(futures).expectValue() == Array(0..<10_000))
    }

    // MARK: race and any

    @Test func raceTakesTheFirstOutcomeAndCancelsTheOthers() async throws {
        let slow = Promise<Int>()
        let fast = Promise<Int>()
        let raced = Future.race([slow.future, fast.future])
        fast.succeed(2)
        #expect(try await raced.expectValue() == 2)
        #expect(slow.isCancelled)

        let failingFirst = Promise<Int>()
        let other = Promise<Int>()
        let raced2 = Future.race([other.future, failingFirst.future])
        failingFirst.fail(TestError(1))
        #expect(await raced2.expectError() as? TestError == TestError(1))
        #expect(other.isCancelled)
        #expect(await Future<Int>.race([]).expectError() as? FutureError == .noFutures)
    }

    @Test func anyWaitsForASuccess() async throws {
        let failing = Promise<Int>()
        let succeeding = Promise<Int>()
        let slow = Promise<Int>()
        let anyOf = Future.any([failing.future, succeeding.future, slow.future])
        failing.fail(TestError(1))
        #expect(!anyOf.isCompleted)
        succeeding.succeed(5)
        #expect(try await anyOf.expectValue() == 5)
        #expect(slow.isCancelled)

        let allFail = Future.any([Future<Int>.failed(TestError(1)), .failed(TestError(2))])
        #expect(await allFail.expectError() as? TestError == TestError(2))
    }

    @Test func cancellingARaceCancelsEveryInput() async {
        let inputs = (0..<3).map { _ in Promise<Int>() }
        let raced = Future.race(inputs.map(\.future))
        raced.cancel()
        #expect(inputs.allSatisfy { $0.isCancelled })
        let anyInputs = (0..<3).map { _ in Promise<Int>() }
        Future.any(anyInputs.map(\.future)).cancel()
        #expect(anyInputs.allSatisfy { $0.isCancelled })
    }

    /// An empty array: `race` and `any` fail at once, with `noFutures`.
    @Test func anEmptyRaceOrAnyFailsAtOnce() async {
        let race = Future<Int>.race([])
        let any = Future<Int>.any([])
        #expect(race.isCompleted)
        #expect(any.isCompleted)
        #expect(await race.expectError() as? FutureError == .noFutures)
        #expect(await any.expectError() as? FutureError == .noFutures)
    }
}
