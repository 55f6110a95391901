import BatonInternals
import Foundation
import Testing

@Suite struct ProcessorCountTests {
    /// Foundation reads the same affinity mask on Linux and the same online count elsewhere; the
    /// two agree on a machine without a cgroup CPU quota (where this one would be the lower).
    @Test func agreesWithFoundationWithoutACPUQuota() throws {
        let quota = try? String(contentsOfFile: "/sys/fs/cgroup/cpu.max", encoding: .utf8)
        try #require(quota == nil || quota!.hasPrefix("max"), "this machine has a CPU quota: \(quota!)")
        #expect(ProcessorCount.current() == ProcessInfo.processInfo.activeProcessorCount)
    }

    @Test func isAtLeastOneAndAtMostTheProcessorsConfigured() {
        #expect(ProcessorCount.active >= 1)
        #expect(ProcessorCount.active <= ProcessInfo.processInfo.processorCount)
        #expect(ProcessorCount.active == ProcessorCount.current())
    }
}
