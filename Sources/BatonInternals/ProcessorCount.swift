import CBatonPlatform

/// How many processors this process can run on at once: the default width of a `JobQueue`
/// and what a `MemoryCache` sizes its shards and counters by, without Foundation.
package enum ProcessorCount {
    /// The count when it was first read (processors rarely come and go while a process runs,
    /// and every cache and queue made should agree on it).
    package static let active: Int = current()

    /// The count now. On Linux, the processors in the calling thread's affinity mask (as
    /// `taskset` or a container's cpuset leaves them), further bounded by a cgroup v2 CPU
    /// quota rounded up (a container limited to 1.5 CPUs counts 2); elsewhere, the processors
    /// online. Never less than 1.
    package static func current() -> Int {
        #if os(Linux)
        let quota = firstLine(of: "/sys/fs/cgroup/cpu.max").flatMap(cpuLimit(cpuMax:))
        return combined(
            affinity: Int(baton_affinity_processor_count()), online: Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))),
            quota: quota)
        #else
        return combined(affinity: nil, online: Int(sysconf(_SC_NPROCESSORS_ONLN)), quota: nil)
        #endif
    }

    /// The count from what was read: the processors in the affinity mask (zero or less: it
    /// could not be read), else those online, bounded by the CPU quota if there is one; never
    /// less than 1.
    package static func combined(affinity: Int?, online: Int, quota: Int?) -> Int {
        var count = online
        if let affinity, affinity > 0 { count = affinity }
        if let quota { count = min(count, quota) }
        return max(1, count)
    }

    /// The CPU limit in a cgroup v2 `cpu.max` line ("quota period", or "max period" for none),
    /// in processors rounded up (a quota of 1.5 periods is 2); nil without a limit, or for a
    /// line that is not one.
    package static func cpuLimit(cpuMax line: String) -> Int? {
        let fields = line.split(separator: " ")
        guard fields.count == 2, let quota = Int(fields[0]), let period = Int(fields[1]), quota > 0, period > 0
        else { return nil }
        return (quota + period - 1) / period
    }

    /// The first line of a small text file (at most 255 bytes of it), without its newline;
    /// nil if it cannot be read.
    package static func firstLine(of path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 256)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return nil }
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self).trimmingSuffix("\n")
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: Character) -> String {
        last == suffix ? String(dropLast()) : self
    }
}
