// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Baton",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .macCatalyst(.v16)],
    products: [
        .library(name: "Baton", targets: ["Baton"]),
        .library(name: "BatonLocks", targets: ["BatonLocks"]),
        .library(name: "BatonJobs", targets: ["BatonJobs"]),
        .executable(name: "baton", targets: ["baton"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-atomics", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // Platform shims that Swift cannot express directly (the variadic futex syscall, a CPU
        // spin hint). Only the lock primitives use it.
        .target(name: "CBatonPlatform"),
        .target(
            name: "BatonLocks",
            dependencies: [
                "CBatonPlatform",
                .product(name: "Atomics", package: "swift-atomics"),
            ]
        ),
        .target(name: "BatonJobs", dependencies: ["BatonLocks"]),
        .target(name: "Baton", dependencies: ["BatonLocks", "BatonJobs"]),
        .target(name: "BatonBench", dependencies: ["BatonLocks", "BatonJobs"]),
        .executableTarget(
            name: "baton",
            dependencies: [
                "BatonBench",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(name: "BatonLocksTests", dependencies: ["BatonLocks"]),
        .testTarget(name: "BatonJobsTests", dependencies: ["BatonJobs"]),
        .testTarget(name: "BatonBenchTests", dependencies: ["BatonBench"]),
    ],
    swiftLanguageModes: [.v6]
)
