import BatonFutures
import Foundation
import Testing

@Suite struct AsyncBridgeTests {
    @Test func valueAwaitsTheResult() async throws {
        let promise = Promise<Int>()
        DispatchQueue.global().async { promise.succeed(4) }
        #expect(try await promise.future.timeout(after: patience).value == 4)
        await #expect(throws: TestError.self) { try await Future<Int>.failed(TestError()).value }
    }

    @Test func cancellingTheAwaitingTaskCancelsTheFuture() async {
        let promise = Promise<Int>()
        let waiting = Promise<Void>()
        promise.onCancel { waiting.succeed() }
        let task = Task { try await promise.future.value }
        task.cancel()
        let outcome = await task.result
        #expect(throws: CancellationError.self) { try outcome.get() }
        #expect((try? await waiting.future.expectValue()) != nil)
        #expect(promise.isCancelled)
    }

    @Test func asyncBodyCompletesTheFuture() async throws {
        #expect(try await Future { () async throws -> Int in 6 * 7 }.expectValue() == 42)
        let failing = Future { () async throws -> Int in throw TestError(1) }
        #expect(await failing.expectError() as? TestError == TestError(1))
    }

    @Test func cancelCancelsTheAsyncBodysTask() async throws {
        let started = Promise<Void>()
        let bodySawCancellation = Promise<Bool>()
        let future = Future { () async throws -> Int in
            started.succeed()
            do {
                try await Task.sleep(for: .seconds(60))
                bodySawCancellation.succeed(false)
            } catch {
                bodySawCancellation.succeed(error is CancellationError)
            }
            return 1
        }
        _ = try? await started.future.expectValue()
        future.cancel()
        #expect(await future.expectError() is CancellationError)
        #expect(try await bodySawCancellation.future.expectValue() == true)
    }

    @Test func waitBlocksUntilCompletion() throws {
        let promise = Promise<Int>()
        DispatchQueue.global().async { promise.succeed(9) }
        #expect(try promise.future.wait(timeout: patience) == 9)
        #expect(try Future.succeeded(1).wait() == 1)
        #expect(throws: FutureError.timedOut(after: .milliseconds(10))) {
            try Promise<Int>().future.wait(timeout: .milliseconds(10))
        }
    }
}
