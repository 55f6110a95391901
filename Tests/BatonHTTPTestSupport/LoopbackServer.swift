import BatonFutures
import Foundation
import Hummingbird

/// Serves `router` on 127.0.0.1, on a port the system picks, for the rest of the test process,
/// and completes `port` with that port once the server listens (or fails it if the server has no
/// address). The tests' HTTP servers are real ones: a test talks to them through `URLSession`,
/// never through a mock.
public func serveOnLoopback(_ router: Router<BasicRequestContext>, reportingPortTo port: Promise<Int>) {
    let app = Application(
        router: router,
        configuration: .init(address: .hostname("127.0.0.1", port: 0)),
        onServerRunning: { channel in
            if let bound = channel.localAddress?.port {
                port.succeed(bound)
            } else {
                port.fail(URLError(.cannotConnectToHost))
            }
        }
    )
    Task { try await app.run() }
}
