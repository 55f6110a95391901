import BatonFutures
import BatonLocks
import BatonTestSupport
import Testing

/// A promise completed with a future that waits for the promise's own future fails with
/// `FutureError.adoptionCycle` at once, and so does every future on the cycle; nothing hangs
/// and nothing stays alive.
///
/// Each check reads `isCompleted` right after the call that closed the cycle: the failure is
/// reported by that call, not eventually.
@Suite("Adoption cycles")
struct AdoptionCycleTests {
    @Test("a promise completed with its own future fails with the cycle error", .timeLimit(.minutes(1)))
    func selfAdoption() {
        let promise = Promise<Int>()
        promise.complete(with: promise.future)
        #expect(promise.future.isCompleted)
        #expect(promise.future.cycleError == .adoptionCycle)
        // The failure is the outcome: a later completion is ignored.
        #expect(!promise.tryComplete(with: .success(1)))
    }

    @Test("two promises adopting each other both fail", .timeLimit(.minutes(1)))
    func twoPromiseCycle() {
        let a = Promise<Int>()
        let b = Promise<Int>()
        a.complete(with: b.future)
        #expect(!a.future.isCompleted)
        b.complete(with: a.future)
        #expect(a.future.cycleError == .adoptionCycle)
        #expect(b.future.cycleError == .adoptionCycle)
    }

    @Test("three promises adopting each other in a ring all fail", .timeLimit(.minutes(1)))
    func threePromiseCycle() {
        let a = Promise<String>()
        let b = Promise<String>()
        let c = Promise<String>()
        a.complete(with: b.future)
        b.complete(with: c.future)
        #expect(![a, b, c].contains { $0.future.isCompleted })
        c.complete(with: a.future)
        for promise in [a, b, c] { #expect(promise.future.cycleError == .adoptionCycle) }
    }

    @Test("a cycle through the second of two adopted futures is found", .timeLimit(.minutes(1)))
    func cycleThroughABranch() throws {
        // top adopts left, then right; left adopts an unrelated future, right adopts bottom.
        let top = Promise<Int>()
        let left = Promise<Int>()
        let right = Promise<Int>()
        let bottom = Promise<Int>()
        let unrelated = Promise<Int>()
        top.complete(with: left.future)
        top.complete(with: right.future)
        left.complete(with: unrelated.future)
        right.complete(with: bottom.future)
        #expect(![top, left, right, bottom].contains { $0.future.isCompleted })
        // bottom adopting top closes a cycle through right only.
        bottom.complete(with: top.future)
        for promise in [top, right, bottom] { #expect(promise.future.cycleError == .adoptionCycle) }
        // left is not on the cycle: it still waits for the future it adopted.
        #expect(!left.future.isCompleted)
        unrelated.succeed(3)
        #expect(try left.future.result?.get() == 3)

        // A diamond (top adopts left and right, both adopt bottom) is no cycle: it completes.
        let top2 = Promise<Int>()
        let left2 = Promise<Int>()
        let right2 = Promise<Int>()
        let bottom2 = Promise<Int>()
        top2.complete(with: left2.future)
        top2.complete(with: right2.future)
        left2.complete(with: bottom2.future)
        right2.complete(with: bottom2.future)
        let other = Promise<Int>()
        bottom2.complete(with: other.future)
        other.succeed(8)
        for promise in [top2, left2, right2, bottom2] { #expect(try promise.future.result?.get() == 8) }
    }

    @Test("flatMap returning its own future fails with the cycle error", .timeLimit(.minutes(1)))
    func flatMapReturningItself() {
        let source = Promise<Int>()
        let box = Protected<Future<Int>?>(nil)
        let chained = source.future.flatMap { _ in box.value! }
        box.write { $0 = chained }
        source.succeed(1)
        #expect(chained.cycleError == .adoptionCycle)
        box.write { $0 = nil }
    }

    /// Two threads close the same two-cycle at once (A adopts B while B adopts A): the lock
    /// around check-and-add lets exactly one find it, and both futures fail.
    @Test("two threads racing to close a two-cycle: both futures fail", .timeLimit(.minutes(1)))
    func racingToCloseATwoCycle() async {
        let rounds = reducedUnderSanitizer(300, by: 3)
        for _ in 0..<rounds {
            let a = Promise<Int>()
            let b = Promise<Int>()
            await raceThreads([
                { a.complete(with: b.future) },
                { b.complete(with: a.future) },
            ])
            #expect(a.future.cycleError == .adoptionCycle)
            #expect(b.future.cycleError == .adoptionCycle)
        }
    }

    @Test("a chain of 10,000 adoptions is not a cycle, and completes with the value", .timeLimit(.minutes(1)))
    func longChain() throws {
        let promises = (0..<10_000).map { _ in Promise<Int>() }
        for index in 0..<promises.count - 1 { promises[index].complete(with: promises[index + 1].future) }
        // This adoption walks the whole chain and finds no cycle.
        let head = Promise<Int>()
        head.complete(with: promises[0].future)
        #expect(!head.future.isCompleted)
        promises[promises.count - 1].succeed(42)
        #expect(try head.future.result?.get() == 42)
        #expect(try promises.allSatisfy { try $0.future.result?.get() == 42 })
    }

    @Test("closing a chain of 10,000 adoptions into a cycle fails all of them", .timeLimit(.minutes(1)))
    func longCycle() {
        let promises = (0..<10_000).map { _ in Promise<Int>() }
        for index in 0..<promises.count - 1 { promises[index].complete(with: promises[index + 1].future) }
        promises[promises.count - 1].complete(with: promises[0].future)
        #expect(promises.allSatisfy { $0.future.cycleError == .adoptionCycle })
    }

    @Test("the futures and callbacks of a failed cycle are released", .timeLimit(.minutes(1)))
    func cycleIsReleased() async {
        let census = Census()
        let futures = WeakRefs()
        do {
            let lone = Promise<Tracked>()
            let ring = (0..<3).map { _ in Promise<Tracked>() }
            for promise in [lone] + ring {
                futures.add(promise.future)
                let tracked = Tracked(census)
                promise.future.whenComplete { _ in _ = tracked }
            }
            lone.complete(with: lone.future)
            ring[0].complete(with: ring[1].future)
            ring[1].complete(with: ring[2].future)
            ring[2].complete(with: ring[0].future)
            #expect(([lone] + ring).allSatisfy { $0.future.isCompleted })
        }
        #expect(census.made == 4)
        await expectAllReleased(futures, census)
    }
}

extension Future {
    /// The `FutureError` the future failed with; `nil` while pending, or with another outcome.
    fileprivate var cycleError: FutureError? {
        guard case .failure(let error)? = result else { return nil }
        return error as? FutureError
    }
}
