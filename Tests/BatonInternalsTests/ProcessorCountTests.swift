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

    @Test func theAffinityMaskCountsBeforeTheOnlineProcessorsAndTheQuotaBoundsBoth() {
        #expect(ProcessorCount.combined(affinity: 3, online: 8, quota: nil) == 3)
        #expect(ProcessorCount.combined(affinity: 1, online: 8, quota: nil) == 1)
        #expect(ProcessorCount.combined(affinity: nil, online: 8, quota: nil) == 8)
        // A mask that could not be read (the call reports zero or less) leaves the online count.
        #expect(ProcessorCount.combined(affinity: 0, online: 8, quota: nil) == 8)
        #expect(ProcessorCount.combined(affinity: -1, online: 8, quota: nil) == 8)
        #expect(ProcessorCount.combined(affinity: 6, online: 8, quota: 2) == 2)
        #expect(ProcessorCount.combined(affinity: 2, online: 8, quota: 4) == 2)
        // Never less than one, whatever was read.
        #expect(ProcessorCount.combined(affinity: nil, online: 0, quota: nil) == 1)
        #expect(ProcessorCount.combined(affinity: nil, online: -1, quota: nil) == 1)
    }

    @Test func aCgroupCPULimitIsTheQuotaInPeriodsRoundedUp() {
        #expect(ProcessorCount.cpuLimit(cpuMax: "200000 100000") == 2)
        #expect(ProcessorCount.cpuLimit(cpuMax: "150000 100000") == 2)
        #expect(ProcessorCount.cpuLimit(cpuMax: "100001 100000") == 2)
        #expect(ProcessorCount.cpuLimit(cpuMax: "50000 100000") == 1)
        #expect(ProcessorCount.cpuLimit(cpuMax: "1 100000") == 1)
        #expect(ProcessorCount.cpuLimit(cpuMax: "400000 50000") == 8)
        #expect(ProcessorCount.cpuLimit(cpuMax: "3 1") == 3)
        // No limit, or a line that is not a limit.
        #expect(ProcessorCount.cpuLimit(cpuMax: "max 100000") == nil)
        #expect(ProcessorCount.cpuLimit(cpuMax: "0 100000") == nil)
        #expect(ProcessorCount.cpuLimit(cpuMax: "100000 0") == nil)
        #expect(ProcessorCount.cpuLimit(cpuMax: "100000") == nil)
        #expect(ProcessorCount.cpuLimit(cpuMax: "100000 100000 1") == nil)
        #expect(ProcessorCount.cpuLimit(cpuMax: "") == nil)
    }

    @Test func theFirstLineOfAFileIsReadWithoutItsNewline() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("baton-first-line-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        func write(_ name: String, _ text: String) throws -> String {
            let url = folder.appendingPathComponent(name)
            try Data(text.utf8).write(to: url)
            return url.path
        }
        #expect(ProcessorCount.firstLine(of: try write("limit", "150000 100000\nmore\n")) == "150000 100000")
        #expect(ProcessorCount.firstLine(of: try write("bare", "max 100000")) == "max 100000")
        #expect(ProcessorCount.firstLine(of: try write("blank", "\n")) == "")
        #expect(ProcessorCount.firstLine(of: try write("empty", "")) == nil)
        #expect(ProcessorCount.firstLine(of: folder.appendingPathComponent("missing").path) == nil)
        let long = String(repeating: "7", count: 300)
        #expect(ProcessorCount.firstLine(of: try write("long", long)) == String(long.prefix(255)))
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
