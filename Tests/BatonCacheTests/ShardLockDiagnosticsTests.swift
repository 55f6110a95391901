import BatonCache
import BatonLocks
import Foundation
import Testing

/// A shared lookup takes its shard's read lock through a handle the shard keeps beside its own
/// fields, not through the lock object; while diagnostics are on it must still be the lock's
/// own tracked acquisition.
@Suite("A cache's shard locks under lock diagnostics")
struct ShardLockDiagnosticsTests {
    @Test(
        "With statistics on, each lookup counts one acquisition of its shard's lock, under SIEVE and under TinyLFU",
        .timeLimit(.minutes(1))
    )
    func lookupsAreCounted() async {
        // In a process of its own: the statistics are global, and no other test's cache may
        // count acquisitions under the same name meanwhile.
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            LockDiagnostics.collectsStatistics = true
            for policy in [EvictionPolicy.sieve, .tinyLFU] {
                let cache = MemoryCache<Int, Int>(countLimit: 1_000, policy: policy)
                for key in 0..<10 { cache[key] = key }
                let before = shardLockAcquisitions()
                // Ten hits and ten misses, then five hits again: 25 lookups, none of them a write.
                for key in 0..<25 { _ = cache.value(forKey: key % 20) }
                let counted = shardLockAcquisitions() - before
                if counted != 25 {
                    FileHandle.standardError.write(Data("\(policy): \(counted) acquisitions for 25 lookups\n".utf8))
                    exit(EXIT_FAILURE)
                }
            }
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.isEmpty, "stderr: \(message)")
    }
}

/// Acquisitions counted so far under the name every cache gives its shards' locks.
private func shardLockAcquisitions() -> Int {
    LockDiagnostics.statistics().first { $0.name == "MemoryCache.shard" }?.acquisitions ?? 0
}
