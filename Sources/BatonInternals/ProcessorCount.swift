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
        var count = affinityCount() ?? Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        if let quota = cgroupQuota() { count = min(count, quota) }
        return max(1, count)
        #else
        return max(1, Int(sysconf(_SC_NPROCESSORS_ONLN)))
        #endif
    }

    #if os(Linux)
    /// The processors in the calling thread's affinity mask; nil if it cannot be read.
    private static func affinityCount() -> Int? {
        let count = baton_affinity_processor_count()
        return count > 0 ? Int(count) : nil
    }

    /// The CPU limit of the process's cgroup (v2, `cpu.max`: "quota period", or "max" for
    /// none), rounded up; nil without a limit.
    private static func cgroupQuota() -> Int? {
        guard let line = firstLine(of: "/sys/fs/cgroup/cpu.max") else { return nil }
        let fields = line.split(separator: " ")
        guard fields.count == 2, let quota = Int(fields[0]), let period = Int(fields[1]), quota > 0, period > 0
        else { return nil }
        return (quota + period - 1) / period
    }

    /// The first line of a small text file; nil if it cannot be read.
    private static func firstLine(of path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 256)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return nil }
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self).trimmingSuffix("\n")
    }
    #endif
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: Character) -> String {
        last == suffix ? String(dropLast()) : self
    }
}
