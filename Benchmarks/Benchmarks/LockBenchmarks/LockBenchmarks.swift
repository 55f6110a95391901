import Baton
import Benchmark
import Foundation

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .throughput],
        maxDuration: .seconds(1),
        maxIterations: 1_000_000
    )
    let scaled = Benchmark.Configuration(scalingFactor: .kilo)

    Benchmark("Lock.withLock", configuration: scaled) { benchmark in
        let lock = Lock()
        var sum = 0
        for i in benchmark.scaledIterations { lock.withLock { sum &+= i } }
        blackHole(sum)
    }

    Benchmark("RecursiveLock.withLock", configuration: scaled) { benchmark in
        let lock = RecursiveLock()
        var sum = 0
        for i in benchmark.scaledIterations { lock.withLock { sum &+= i } }
        blackHole(sum)
    }

    Benchmark("ReadWriteLock.withReadLock", configuration: scaled) { benchmark in
        let lock = ReadWriteLock()
        var sum = 0
        for i in benchmark.scaledIterations { lock.withReadLock { sum &+= i } }
        blackHole(sum)
    }

    Benchmark("ReadWriteLock.withWriteLock", configuration: scaled) { benchmark in
        let lock = ReadWriteLock()
        var sum = 0
        for i in benchmark.scaledIterations { lock.withWriteLock { sum &+= i } }
        blackHole(sum)
    }

    Benchmark("Protected.read", configuration: scaled) { benchmark in
        let protected = Protected(0)
        var sum = 0
        for _ in benchmark.scaledIterations { sum &+= protected.read { $0 } }
        blackHole(sum)
    }

    Benchmark("Protected.write", configuration: scaled) { benchmark in
        let protected = Protected(0)
        for _ in benchmark.scaledIterations { protected.write { $0 &+= 1 } }
        blackHole(protected.value)
    }

    Benchmark("NSLock.lock+unlock", configuration: scaled) { benchmark in
        let lock = NSLock()
        var sum = 0
        for i in benchmark.scaledIterations {
            lock.lock()
            sum &+= i
            lock.unlock()
        }
        blackHole(sum)
    }
}
