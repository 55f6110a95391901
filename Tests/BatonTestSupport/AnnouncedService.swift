#if Lifecycle
import Dispatch
import ServiceLifecycle

/// A service that says when its group has started it, then runs `wrapped`: a test that cancels
/// the group waits for this first, so that the cancellation reaches a running service.
public struct Announced<Wrapped: Service>: Service {
    public let wrapped: Wrapped
    private let started = DispatchSemaphore(value: 0)

    public init(_ wrapped: Wrapped) {
        self.wrapped = wrapped
    }

    public func run() async throws {
        started.signal()
        try await wrapped.run()
    }

    /// Waits (at most a minute) until the group has started the service.
    public func waitUntilStarted() -> Bool {
        started.wait(timeout: .now() + .seconds(60)) == .success
    }
}
#endif
