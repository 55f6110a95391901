// swift-tools-version: 6.1
import PackageDescription

// Micro-benchmarks of Baton's single operations (cost per call, allocations), beside the
// comparative scenarios of `baton bench`. Run with `swift package benchmark` in this folder.
let package = Package(
    name: "BatonBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "Baton", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "LockBenchmarks",
            dependencies: [
                .product(name: "Baton", package: "Baton"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/LockBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        )
    ],
    swiftLanguageModes: [.v6]
)
