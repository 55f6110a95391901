import Foundation

// Some checks need a thread to be waiting *inside* a lock call, not merely about to make it:
// only then does "who goes first" mean anything. On Linux the kernel says whether a thread is
// asleep on a futex, which is where the Baton locks park. This is a precondition the test waits
// for (with a deadline), never the proof of what it checks.

/// The calling thread's kernel ID, to ask later whether it is parked; `nil` where the platform
/// cannot tell.
func currentKernelThreadID() -> String? {
    #if os(Linux)
    // "/proc/thread-self" links to "<pid>/task/<tid>".
    guard let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")
    else { return nil }
    return link.split(separator: "/").last.map(String.init)
    #else
    return nil
    #endif
}

/// Waits until the thread `threadID` sleeps in the kernel on a futex, that is, has parked in a
/// lock. `false` if it has ended or does not park within `timeout`. Where the platform cannot
/// tell (`threadID` is `nil`), returns `true` at once and the caller's check is weaker.
func waitUntilParked(_ threadID: String?, timeout: DispatchTimeInterval = generousTimeout) -> Bool {
    guard let threadID else { return true }
    let deadline = DispatchTime.now() + timeout
    while DispatchTime.now() < deadline {
        switch state(ofThread: threadID) {
        case .parked: return true
        case .gone: return false
        case .running: usleep(50)
        }
    }
    return false
}

private enum ThreadState {
    case parked, running, gone
}

private func state(ofThread threadID: String) -> ThreadState {
    let task = "/proc/self/task/\(threadID)"
    guard let stat = try? String(contentsOfFile: "\(task)/stat", encoding: .utf8) else { return .gone }
    guard let afterName = stat.range(of: ") ", options: .backwards) else { return .running }
    // State "S": asleep, waiting for an event (a preempted thread would show "R").
    guard stat[afterName.upperBound...].first == "S" else { return .running }
    // The wait channel names the kernel function it sleeps in; some kernels hide it ("0").
    let channel = (try? String(contentsOfFile: "\(task)/wchan", encoding: .utf8)) ?? "0"
    return channel == "0" || channel.contains("futex") ? .parked : .running
}
