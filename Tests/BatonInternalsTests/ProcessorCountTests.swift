import BatonInternals
import Foundation
import Testing

@Suite struct ProcessorCountTests {
    /// Foundation reads the same affinity mask on Linux and the same online count elsewhere; the
    /// two agree on a machine without a cgroup CPU quota (where this one would be the lower).
    @Test(.enabled(if: !hasCPUQuota, "with a CPU quota the count is the quota's, which Foundation may not read"))
    func agreesWithFoundationWithoutACPUQuota() {
        #expect(ProcessorCount.current() == ProcessInfo.processInfo.activeProcessorCount)
    }

    @Test func isAtLeastOneAndAtMostTheProcessorsConfigured() {
        #expect(ProcessorCount.active >= 1)
        #expect(ProcessorCount.active <= ProcessInfo.processInfo.processorCount)
        #expect(ProcessorCount.active == ProcessorCount.current())
    }
}

/// Whether the process's cgroup limits its CPU time (cgroup v2 `cpu.max` other than "max").
private let hasCPUQuota: Bool = {
    guard let quota = try? String(contentsOfFile: "/sys/fs/cgroup/cpu.max", encoding: .utf8) else { return false }
    return !quota.hasPrefix("max")
}()
