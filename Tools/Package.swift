// swift-tools-version: 6.1
import PackageDescription

// Baton's tools, beside the library and never part of it: the `baton` command line (bench,
// stress, fetch), the bench's scenarios (a library target, so that tests run each at a tiny
// size) and the stress tool's engine. They depend on the library as any user does, by path.
//
//     swift run --package-path Tools -c release baton bench

let baton: [Target.Dependency] = ["BatonLocks", "BatonCache", "BatonJobs", "BatonFutures", "BatonHTTP", "BatonTesting"]
    .map { .product(name: $0, package: "Baton") }
let atomics: Target.Dependency = .product(name: "Atomics", package: "swift-atomics")

let package = Package(
    name: "BatonTools",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "baton", targets: ["baton"])
    ],
    dependencies: [
        // The Metrics trait: the cache scenario measures a cache watched by a `MetricsReporter`.
        // The AsyncHTTPClient trait: the http scenario measures a `Fetcher` over `HTTPClientTransport`.
        .package(name: "Baton", path: "..", traits: ["Metrics", "AsyncHTTPClient"]),
        .package(url: "https://github.com/apple/swift-atomics", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // The reporter's backend in the cache scenario: a Prometheus registry, as a service has.
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // The futures bench's anchor: NIO's EventLoopPromise; the http scenario's server.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        // The http scenario's anchor: a bare AsyncHTTPClient loop.
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    ],
    targets: [
        .target(
            name: "BatonBench",
            dependencies: baton + [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        // `baton stress`: linearizability checking and stress runs of every structure.
        .target(name: "BatonStress", dependencies: baton + [atomics]),
        .executableTarget(
            name: "baton",
            dependencies: [
                "BatonBench", "BatonStress", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "BatonBenchTests",
            dependencies: ["BatonBench", atomics, .product(name: "Prometheus", package: "swift-prometheus")] + baton),
        .testTarget(name: "BatonStressTests", dependencies: ["BatonStress"] + baton),
    ],
    swiftLanguageModes: [.v6]
)
