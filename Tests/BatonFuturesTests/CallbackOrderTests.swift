import BatonFutures
import BatonLocks
import Foundation
import Testing

/// Callbacks of one future run in registration order at any inline depth, including past the
/// depth where the inline trampoline starts deferring them (64 frames).
@Suite struct CallbackOrderTests {
    static let depths = [1, 62, 63, 64, 65, 200]

    /// h1 and h2 are registered on a pending future; a callback `depth` maps deep completes it;
    /// then, back in the shallowest frame, h3 is registered on the completed future. h3 must
    /// run after h1 and h2, whatever the depth.
    @Test(.timeLimit(.minutes(1)), arguments: depths)
    func inlineCallbacksKeepRegistrationOrderAtAnyDepth(depth: Int) {
        let order = Protected<[Int]>([])
        let target = Promise<Int>()
        target.future.whenComplete { _ in order.write { $0.append(1) } }
        target.future.whenComplete { _ in order.write { $0.append(2) } }

        completeDeep(target, depth: depth) {
            // A shallower frame than the one that completed `target`.
            target.future.whenComplete { _ in order.write { $0.append(3) } }
        }
        #expect(order.value == [1, 2, 3], "depth \(depth)")
    }

    /// The same, and a fourth callback registered from inside h1 (so while callbacks of the
    /// same future are still running): it runs after h3, which was registered before it.
    @Test(.timeLimit(.minutes(1)), arguments: depths)
    func callbacksRegisteredWhileOthersRunQueueBehindThem(depth: Int) {
        let order = Protected<[Int]>([])
        let target = Promise<Int>()
        target.future.whenComplete { _ in
            order.write { $0.append(1) }
            target.future.whenComplete { _ in order.write { $0.append(4) } }
        }
        target.future.whenComplete { _ in order.write { $0.append(2) } }

        completeDeep(target, depth: depth) {
            target.future.whenComplete { _ in order.write { $0.append(3) } }
        }
        let seen = order.value
        #expect(Set(seen) == [1, 2, 3, 4], "depth \(depth)")
        #expect(seen.firstIndex(of: 1)! < seen.firstIndex(of: 2)!, "depth \(depth): \(seen)")
        #expect(seen.firstIndex(of: 2)! < seen.firstIndex(of: 3)!, "depth \(depth): \(seen)")
        // Inline at a shallow depth h4 runs inside h1, before h2; once deferred it queues
        // behind h2. Either way it never overtakes h1.
        #expect(seen.first == 1, "depth \(depth): \(seen)")
    }

    /// On a serial queue the callbacks arrive in registration order, the deep chain
    /// notwithstanding.
    @Test(.timeLimit(.minutes(1)), arguments: depths)
    func queueCallbacksKeepRegistrationOrderAtAnyDepth(depth: Int) async {
        let queue = DispatchQueue(label: "callback-order")
        let order = Protected<[Int]>([])
        let allRan = DispatchGroup()
        let target = Promise<Int>()
        for tag in 1...2 {
            allRan.enter()
            target.future.whenComplete(on: .queue(queue)) { _ in
                order.write { $0.append(tag) }
                allRan.leave()
            }
        }
        allRan.enter()
        completeDeep(target, depth: depth) {
            target.future.whenComplete(on: .queue(queue)) { _ in
                order.write { $0.append(3) }
                allRan.leave()
            }
        }
        let finished = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: allRan.wait(timeout: .now() + 30) == .success)
            }
        }
        #expect(finished)
        #expect(order.value == [1, 2, 3], "depth \(depth)")
    }
    /// Inside an inline callback, completes `target` from a callback `depth` maps deep, then
    /// runs `afterwards` back in that shallow callback, once the chain has unwound.
    func completeDeep(_ target: Promise<Int>, depth: Int, afterwards: @escaping @Sendable () -> Void) {
        let outer = Promise<Void>()
        outer.future.whenComplete { _ in
            let root = Promise<Int>()
            var chain = root.future
            for _ in 0..<depth { chain = chain.map { $0 + 1 } }
            chain.whenComplete { _ in target.succeed(0) }
            root.succeed(0)
            afterwards()
        }
        outer.succeed(())
    }
}
