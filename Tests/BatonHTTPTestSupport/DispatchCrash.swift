#if os(Linux)
import CDispatch  // on Linux, the module through which this file sees `ucontext_t`'s members
import Foundation
import Glibc
#endif

/// The exit code of a process that ``exitWhenDispatchCrashes()`` ended because it crashed
/// inside libdispatch.
public let dispatchCrashExitCode: Int32 = 75

/// From now on, a crash whose faulting instruction lies in libdispatch ends this process with
/// ``dispatchCrashExitCode``; any other crash is left to the handler that was there before (the
/// runtime's backtracer), so it still reports where it happened.
///
/// For a test that runs URLSession in a process of its own. On Linux, FoundationNetworking
/// watches libcurl's sockets with Dispatch sources, and after many connection resets Dispatch
/// now and then finds a source finalized twice and stops the process from its event loop (the
/// family of swift-corelibs-foundation#4791: a socket closed while its source is registered).
/// The exit code lets the test tell that crash of the platform from one of its own. Elsewhere
/// this does nothing.
public func exitWhenDispatchCrashes() {
    #if os(Linux)
    DispatchCrashHandler.install()
    #endif
}

#if os(Linux)
private enum DispatchCrashHandler {
    /// The address ranges libdispatch is mapped at, read once before the handlers are installed
    /// and never written after, so that the handler only reads them.
    nonisolated(unsafe) static var ranges: [(start: UInt, end: UInt)] = []
    /// The handler each signal had before, indexed by signal number.
    nonisolated(unsafe) static var previous = Array(repeating: Glibc.sigaction(), count: 32)
    static let signals = [SIGILL, SIGTRAP, SIGSEGV, SIGBUS]

    static func install() {
        let maps = (try? FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/self/maps")).readToEnd()) ?? Data()
        ranges = String(decoding: maps, as: UTF8.self).split(separator: "\n").compactMap { line in
            guard line.hasSuffix("/libdispatch.so") else { return nil }
            let bounds = line.prefix { $0 != " " }.split(separator: "-").compactMap { UInt($0, radix: 16) }
            return bounds.count == 2 ? (bounds[0], bounds[1]) : nil
        }
        precondition(!ranges.isEmpty, "libdispatch.so is not mapped into this process")
        for signal in signals {
            var action = Glibc.sigaction()
            action.__sigaction_handler.sa_sigaction = { signal, _, context in
                if let context, let pc = DispatchCrashHandler.programCounter(context),
                    DispatchCrashHandler.ranges.contains(where: { $0.start <= pc && pc < $0.end })
                {
                    _exit(dispatchCrashExitCode)
                }
                // Not libdispatch's: put the previous handler back, and the faulting
                // instruction, run again on return, reaches it.
                var previous = DispatchCrashHandler.previous[Int(signal)]
                sigaction(signal, &previous, nil)
            }
            action.sa_flags = SA_SIGINFO
            sigaction(signal, &action, &previous[Int(signal)])
        }
    }

    static func programCounter(_ context: UnsafeMutableRawPointer) -> UInt? {
        let context = context.assumingMemoryBound(to: ucontext_t.self)
        #if arch(x86_64)
        return UInt(bitPattern: Int(context.pointee.uc_mcontext.gregs.16))  // REG_RIP
        #elseif arch(arm64)
        return UInt(context.pointee.uc_mcontext.pc)
        #else
        return nil
        #endif
    }
}
#endif
