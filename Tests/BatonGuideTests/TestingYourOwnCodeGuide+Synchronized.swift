#if Macros
import BatonMacros
import BatonTesting
import Testing

// The `@Synchronized` fix of TestingYourOwnConcurrentCode.md, verbatim.

@Synchronized
final class SynchronizedViewCounter {
    var count = 0
    private(set) var lastPage: String?

    func record(_ page: String) {
        withLock {  // one critical section for both
            count += 1
            lastPage = page
        }
    }
}

@Suite("Guide: testing your own concurrent code, with @Synchronized", .timeLimit(.minutes(1)))
struct TestingYourOwnCodeSynchronizedGuideTests {
    @Test("A @Synchronized counter's += is one critical section")
    func synchronizedCounterPasses() {
        let check = LinearizabilityCheck(
            model: CounterModel(), operations: [.increment, .read],
            make: { SynchronizedViewCounter() },
            perform: { counter, operation in
                switch operation {
                case .increment:
                    counter.count += 1
                    return nil
                case .read:
                    return counter.count
                }
            })
        check.expectLinearizable()
    }

    @Test("record counts every page, and keeps the last")
    func recordCountsEveryPage() {
        let check = LinearizabilityCheck(
            model: CounterModel(), operations: [.increment, .read],
            make: { SynchronizedViewCounter() },
            perform: { counter, operation in
                switch operation {
                case .increment:
                    counter.record("/home")
                    return nil
                case .read:
                    return counter.count
                }
            })
        check.expectLinearizable()
    }
}
#endif
