// swift-tools-version: 6.1
import CompilerPluginSupport
import PackageDescription

/// The seam and the model checker of the `ModelChecking` trait (see its description).
let modelChecking: [SwiftSetting] = [.define("BATON_MODEL_CHECK", .when(traits: ["ModelChecking"]))]

let package = Package(
    name: "Baton",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .macCatalyst(.v16)],
    products: [
        .library(name: "Baton", targets: ["Baton"]),
        .library(name: "BatonLocks", targets: ["BatonLocks"]),
        .library(name: "BatonCache", targets: ["BatonCache"]),
        .library(name: "BatonJobs", targets: ["BatonJobs"]),
        .library(name: "BatonFutures", targets: ["BatonFutures"]),
        .library(name: "BatonHTTP", targets: ["BatonHTTP"]),
        // `@Synchronized`; its compiler plugin needs swift-syntax, so it takes the Macros trait.
        .library(name: "BatonMacros", targets: ["BatonMacros"]),
        .executable(name: "baton", targets: ["baton"]),
    ],
    // What only the `baton` command line needs sits behind a trait that is off by default, so
    // that a package depending on any library product fetches nothing but swift-atomics.
    traits: [
        .trait(
            name: "Tools",
            description: """
                The `baton` command line (bench, stress, fetch): swift-argument-parser, and \
                swift-nio for the bench's EventLoopPromise anchor. \
                `swift run -c release --traits Tools baton bench`. Enables Macros, for the \
                bench's `@Synchronized` contender.
                """,
            enabledTraits: ["Macros"]
        ),
        .trait(
            name: "Macros",
            description: """
                `@Synchronized` in the BatonMacros product: its compiler plugin, built with \
                swift-syntax. A package that uses BatonMacros enables it: \
                `.package(url: …, from: …, traits: ["Macros"])`.
                """
        ),
        .trait(
            name: "ModelChecking",
            description: """
                For Baton's own tests only: the atomics and futex calls of `Lock`, \
                `RecursiveLock`, `ReadWriteLock` and `Future`'s completion go through a seam that \
                a deterministic scheduler controls, and the model checker that explores their \
                interleavings is built. Never enable it in a program: every lock operation then \
                pays a check. Without it the seam is a type alias of the direct atomics.
                """
        ),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-atomics", from: "1.3.0"),
        // The `Tools` trait only: the command line's parser.
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // The `Tools` trait only: the futures bench's anchor (EventLoopPromise).
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        // The `Macros` trait only: the `@Synchronized` compiler plugin and its expansion tests.
        .package(url: "https://github.com/swiftlang/swift-syntax", from: "603.0.1"),
        // A real HTTP server for BatonHTTPTests only (a test-only dependency is never fetched by a
        // consumer).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
    ],
    targets: [
        // Platform shims that Swift cannot express directly (the variadic futex syscall, a CPU
        // spin hint, the affinity mask's processor count).
        .target(name: "CBatonPlatform"),
        // What several modules share, in one place: `Duration` conversions with one overflow rule,
        // the processor count, a seeded generator, threads released together from a gate. All of
        // it `package` access; no product names it, and it imports no Foundation.
        .target(name: "BatonInternals", dependencies: ["CBatonPlatform"]),
        .target(
            name: "BatonLocks",
            dependencies: [
                "CBatonPlatform",
                "BatonInternals",
                .product(name: "Atomics", package: "swift-atomics"),
            ],
            swiftSettings: modelChecking
        ),
        .target(
            name: "BatonCache",
            dependencies: [
                "BatonLocks",
                "BatonInternals",
                .product(name: "Atomics", package: "swift-atomics"),
            ]
        ),
        .target(
            name: "BatonJobs",
            dependencies: ["BatonLocks", "BatonInternals", .product(name: "Atomics", package: "swift-atomics")]),
        .target(
            name: "BatonFutures",
            dependencies: ["BatonLocks", "BatonInternals", .product(name: "Atomics", package: "swift-atomics")],
            swiftSettings: modelChecking
        ),
        .target(name: "BatonHTTP", dependencies: ["BatonFutures", "BatonLocks", "BatonCache"]),
        // The plugin that expands `@Synchronized`. Without the Macros trait no swift-syntax is
        // fetched: the plugin is built as an empty tool that nothing uses, and BatonMacros warns
        // that the macro needs the trait.
        .macro(
            name: "BatonMacrosPlugin",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax", condition: .when(traits: ["Macros"])),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax", condition: .when(traits: ["Macros"])),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax", condition: .when(traits: ["Macros"])),
                .product(name: "SwiftDiagnostics", package: "swift-syntax", condition: .when(traits: ["Macros"])),
            ]
        ),
        .target(
            name: "BatonMacros",
            dependencies: ["BatonLocks", .target(name: "BatonMacrosPlugin", condition: .when(traits: ["Macros"]))]
        ),
        .target(name: "Baton", dependencies: ["BatonLocks", "BatonCache", "BatonJobs", "BatonFutures", "BatonHTTP"]),
        .target(
            name: "BatonBench",
            dependencies: [
                "BatonInternals",
                "BatonLocks",
                "BatonCache",
                "BatonJobs",
                "BatonFutures",
                "BatonHTTP",
                .target(name: "BatonMacros", condition: .when(traits: ["Macros"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Tools"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["Tools"])),
            ]
        ),
        // `baton stress`: linearizability checking and stress runs of every structure. Not a
        // product: it is the CLI's engine, like BatonBench.
        .target(
            name: "BatonStress",
            dependencies: [
                "BatonInternals",
                "BatonLocks",
                "BatonCache",
                "BatonFutures",
                "BatonJobs",
                .product(name: "Atomics", package: "swift-atomics"),
            ]
        ),
        .executableTarget(
            name: "baton",
            dependencies: [
                "BatonBench",
                "BatonInternals",
                "BatonStress",
                .product(
                    name: "ArgumentParser", package: "swift-argument-parser", condition: .when(traits: ["Tools"])
                ),
            ]
        ),
        // What several test targets share: running a suite off the cooperative pool, counting
        // releases for the leak tests, racing threads released together (over BatonInternals'
        // gate). No product names it, so no consumer builds it.
        .target(name: "BatonTestSupport", dependencies: ["BatonInternals"], path: "Tests/BatonTestSupport"),
        .testTarget(
            name: "BatonInternalsTests",
            dependencies: ["BatonInternals", .product(name: "Atomics", package: "swift-atomics")]
        ),
        .testTarget(
            name: "BatonLocksTests", dependencies: ["BatonLocks", "BatonInternals", "BatonTestSupport"],
            swiftSettings: modelChecking
        ),
        .testTarget(
            name: "BatonCacheTests",
            dependencies: [
                "BatonCache", "BatonInternals", "BatonTestSupport", .product(name: "Atomics", package: "swift-atomics"),
            ]
        ),
        .testTarget(name: "BatonJobsTests", dependencies: ["BatonJobs", "BatonInternals", "BatonTestSupport"]),
        .testTarget(
            name: "BatonMacrosTests",
            dependencies: [
                .target(name: "BatonMacros", condition: .when(traits: ["Macros"])),
                .target(name: "BatonMacrosPlugin", condition: .when(traits: ["Macros"])),
                .product(
                    name: "SwiftSyntaxMacrosGenericTestSupport", package: "swift-syntax",
                    condition: .when(traits: ["Macros"])
                ),
                .product(
                    name: "SwiftSyntaxMacroExpansion", package: "swift-syntax", condition: .when(traits: ["Macros"])
                ),
            ]
        ),
        .testTarget(
            name: "BatonBenchTests",
            dependencies: [
                "BatonBench", "BatonInternals", "BatonLocks", .product(name: "Atomics", package: "swift-atomics"),
            ]),
        .testTarget(name: "BatonStressTests", dependencies: ["BatonStress", "BatonInternals", "BatonLocks"]),
        .testTarget(
            name: "BatonFuturesTests",
            dependencies: ["BatonFutures", "BatonInternals", "BatonLocks", "BatonTestSupport"],
            swiftSettings: modelChecking
        ),
        // The real HTTP server on 127.0.0.1 that the HTTP tests and the guides' tests start.
        .target(
            name: "BatonHTTPTestSupport",
            dependencies: ["BatonFutures", .product(name: "Hummingbird", package: "hummingbird")],
            path: "Tests/BatonHTTPTestSupport"
        ),
        .testTarget(
            name: "BatonHTTPTests",
            dependencies: [
                "BatonHTTP",
                "BatonCache",
                "BatonFutures",
                "BatonLocks",
                "BatonTestSupport",
                "BatonHTTPTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
        // The "After" code of the migration guides in Sources/Baton/Baton.docc, verbatim, with
        // tests that run it (Scripts/check-guides checks that every block is here), so that a
        // guide cannot rot. The @Synchronized guide needs the Macros trait.
        .testTarget(
            name: "BatonGuideTests",
            dependencies: [
                "Baton",
                "BatonTestSupport",
                "BatonHTTPTestSupport",
                .target(name: "BatonMacros", condition: .when(traits: ["Macros"])),
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
