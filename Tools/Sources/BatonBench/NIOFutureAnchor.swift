import BatonTesting
import Dispatch
import NIOCore
import NIOPosix

/// NIO's `EventLoopPromise` and `EventLoopFuture` in the futures scenario: the futures a server
/// developer already has. Built with the `Tools` trait only, so that swift-nio never reaches a
/// package that depends on Baton's libraries. Each method does what its `FutureContenders`
/// twin does for `Future`, on NIO's one event loop.
final class NIOFutureAnchor: Sendable {
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private var loop: any EventLoop { group.next() }

    func shutdown() {
        try? group.syncShutdownGracefully()
    }

    func single(_ count: Int) throws -> Double {
        let loop = self.loop
        let sink = Sink()
        let elapsed = try loop.submit {
            timeOnThisThread {
                for index in 0..<count {
                    let promise = loop.makePromise(of: Int.self)
                    promise.futureResult.whenComplete { sink.add($0) }
                    promise.succeed(index)
                }
            }
        }.wait()
        try sink.expect(count)
        return elapsed.nanoseconds / Double(count)
    }

    /// `whenAllSucceed` alone: the inputs are made before the clock starts and freed after it stops.
    func join(_ count: Int) throws -> Double {
        let loop = self.loop
        let futures = (0..<count).map { loop.makeSucceededFuture($0) }
        var values: [Int] = []
        let elapsed = try timeOnThisThread { values = try EventLoopFuture.whenAllSucceed(futures, on: loop).wait() }
        try checkInOrder(values, count)
        return elapsed.nanoseconds / Double(count)
    }

    func all(_ count: Int, async: Bool) throws -> Double {
        let loop = self.loop
        let queue = DispatchQueue.global()
        var values: [Int] = []
        let elapsed = try timeOnThisThread {
            let futures = (0..<count).map { index -> EventLoopFuture<Int> in
                if !async { return loop.makeSucceededFuture(index) }
                let promise = loop.makePromise(of: Int.self)
                queue.async { promise.succeed(index) }
                return promise.futureResult
            }
            values = try EventLoopFuture.whenAllSucceed(futures, on: loop).wait()
        }
        try checkInOrder(values, count)
        return elapsed.nanoseconds / Double(count)
    }

    func chain(_ count: Int) throws -> Double {
        let loop = self.loop
        let (elapsed, value) = try loop.submit { () -> (Duration, Int) in
            var future: EventLoopFuture<Int>?
            let elapsed = timeOnThisThread {
                let root = loop.makePromise(of: Int.self)
                var chained = root.futureResult
                for _ in 0..<count { chained = chained.map { $0 + 1 } }
                root.succeed(0)
                future = chained
            }
            let sink = Sink()
            future!.whenComplete { sink.add($0) }
            return (elapsed, sink.last)
        }.wait()
        guard value == count else { throw BenchFailure("the NIO map chain did not complete") }
        return elapsed.nanoseconds / Double(count)
    }
}
