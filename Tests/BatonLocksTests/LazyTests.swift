import BatonTestSupport
import Foundation
import Testing

@testable import BatonLocks

@Suite("Lazy", .timeLimit(.minutes(1)))
struct LazyTests {
    /// A value with an identity, to tell one initializer run's result from another's.
    final class Token: Sendable {}

    @Test("8 threads racing on the first read run the initializer once and all get its value", arguments: 1...5)
    func racedByEightThreads(round: Int) {
        let runs = Locked(0)
        let lazy = Lazy<Token> {
            runs.withValue { $0 += 1 }
            usleep(2_000)  // long enough for every racer to arrive while it runs
            return Token()
        }
        let seen = Locked<[ObjectIdentifier]>([])
        #expect(
            raceThreads(8) { _ in
                let token = lazy.value
                seen.withValue { $0.append(ObjectIdentifier(token)) }
            })
        #expect(runs.get() == 1)
        #expect(seen.get().count == 8)
        #expect(Set(seen.get()).count == 1)
        #expect(ObjectIdentifier(lazy.value) == seen.get().first)
        #expect(runs.get() == 1)
    }

    @Test("Nothing runs before the first read; later reads return the same value without running it again")
    func runsOnFirstReadOnly() {
        let runs = Locked(0)
        let lazy = Lazy {
            runs.withValue { $0 += 1 }
            return 42
        }
        #expect(runs.get() == 0 && !lazy.isInitialized)
        #expect(lazy.value == 42)
        #expect(lazy.isInitialized)
        for _ in 0..<100 { #expect(lazy.value == 42) }
        #expect(runs.get() == 1)
    }

    @Test("The initializer, and what it captured, is released once it has run")
    func dropsTheInitializer() {
        final class Captured: Sendable {}
        weak var weakCaptured: Captured?
        let lazy: Lazy<Int> = {
            let captured = Captured()
            weakCaptured = captured
            return Lazy { withExtendedLifetime(captured) { 1 } }
        }()
        #expect(weakCaptured != nil)
        #expect(lazy.value == 1)
        #expect(weakCaptured == nil)
    }

    @Test("A reader on another thread while the initializer runs waits for its value, never sees none")
    func readerDuringInitializationWaits() {
        let started = DispatchSemaphore(value: 0)
        let finish = DispatchSemaphore(value: 0)
        let lazy = Lazy<Int> {
            started.signal()
            _ = wait(for: finish)
            return 7
        }
        let first = startThread { _ = lazy.value }
        #expect(wait(for: started))
        let second = Locked<Int?>(nil)
        let reader = startThread { second.set(lazy.value) }
        // The second reader is still waiting: the value is not there yet.
        usleep(20_000)
        #expect(second.get() == nil)
        finish.signal()
        #expect(first.join() && reader.join())
        #expect(second.get() == 7)
    }

    @Test("Reading a Lazy from inside its own initializer stops with a message naming it")
    func readInsideItsInitializerStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            exitSuccessfullyIfStillRunning()
            final class Holder: Sendable {
                let lazy: Lazy<Int>
                init() {
                    let box = Locked<Lazy<Int>?>(nil)
                    lazy = Lazy(name: "settings") { box.get()!.value + 1 }
                    box.set(lazy)
                }
            }
            _ = Holder().lazy.value
        }
        let text = standardError(of: result)
        #expect(text.contains("Lazy<Int> \"settings\" (created at BatonLocksTests/LazyTests.swift:"))
        #expect(text.contains("value read from inside its own initializer"))
    }
}
