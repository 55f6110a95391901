// swift-tools-version: 6.1
import PackageDescription

// An example service built on Baton: a caching HTTP proxy for a fixed list of upstream origins.
// It depends on Baton by path, as a user's package depends on it by URL, with the server traits.
//
//     swift run --package-path Examples/CachingProxy caching-proxy --allow http://127.0.0.1:9000

let package = Package(
    name: "CachingProxy",
    // Hummingbird 2 needs macOS 14.
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "caching-proxy", targets: ["caching-proxy"])
    ],
    dependencies: [
        .package(name: "Baton", path: "../..", traits: ["AsyncHTTPClient", "Lifecycle", "Logging", "Metrics"]),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
    ],
    targets: [
        // The service: its configuration, the proxy's rules and the HTTP application.
        .target(
            name: "CachingProxy",
            dependencies: [
                .product(name: "BatonCache", package: "Baton"),
                .product(name: "BatonHTTP", package: "Baton"),
                .product(name: "BatonLocks", package: "Baton"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        // The command line: flags, logging, and the service group that SIGTERM shuts down.
        .executableTarget(
            name: "caching-proxy",
            dependencies: ["CachingProxy", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        .testTarget(
            name: "CachingProxyTests",
            dependencies: [
                "CachingProxy",
                .product(name: "BatonLocks", package: "Baton"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
