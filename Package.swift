// swift-tools-version: 6.1
import CompilerPluginSupport
import PackageDescription

// Baton's libraries. The command line, the bench and the stress tool are a package of their own
// in Tools/, and the micro-benchmarks in Benchmarks/: a package that depends on Baton fetches
// swift-atomics, swift-syntax only with the Macros trait, and each server integration's package
// only with its trait.

let atomics: Target.Dependency = .product(name: "Atomics", package: "swift-atomics")
let macros: TargetDependencyCondition? = .when(traits: ["Macros"])
/// The server integrations, each a trait that is off by default and fetches only its own package.
let logging: Target.Dependency = .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Logging"]))
let lifecycle: Target.Dependency = .product(
    name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Lifecycle"]))
let metrics: Target.Dependency = .product(
    name: "CoreMetrics", package: "swift-metrics", condition: .when(traits: ["Metrics"]))
/// AsyncHTTPClient and the SwiftNIO modules its API speaks in (a request's deadline, the errors it reports).
let asyncHTTPClient: [Target.Dependency] =
    [.product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["AsyncHTTPClient"]))]
    + ["NIOCore", "NIOFoundationEssentialsCompat", "NIOHTTP1", "NIOPosix"].map {
        .product(name: $0, package: "swift-nio", condition: .when(traits: ["AsyncHTTPClient"]))
    }
/// swift-metrics' test backend, through which the tests read what the reporter exported.
let metricsTestKit: [Target.Dependency] = [
    metrics, .product(name: "MetricsTestKit", package: "swift-metrics", condition: .when(traits: ["Metrics"])),
]
/// The seam of the ModelChecking trait: the lock words' atomics and futex calls, and a future's
/// completion flag, go through a scheduler that the model checker installs.
let modelChecking: [SwiftSetting] = [.define("BATON_MODEL_CHECK", .when(traits: ["ModelChecking"]))]
/// What most test targets build on: the internal target, racing threads and the test support.
let testSupport: [Target.Dependency] = ["BatonInternals", "BatonTesting", "BatonTestSupport"]
/// The manual clock that tests of timeouts and rate limits run on (never on sleeps).
let clocks: Target.Dependency = .product(name: "Clocks", package: "swift-clocks")

let package = Package(
    name: "Baton",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .macCatalyst(.v16)],
    // Each library target is a product of the same name; `Baton` re-exports the five after it.
    products: [
        "Baton", "BatonLocks", "BatonCache", "BatonJobs", "BatonFutures", "BatonHTTP", "BatonMacros", "BatonTesting",
    ]
    .map { .library(name: $0, targets: [$0]) },
    traits: [
        .trait(
            name: "Macros",
            description: """
                `@Synchronized` in the BatonMacros product: its compiler plugin, built with swift-syntax. \
                A package that uses BatonMacros enables it: `.package(url: …, from: …, traits: ["Macros"])`.
                """
        ),
        .trait(
            name: "Logging",
            description: """
                Lock diagnostics reports (`LockDiagnostics.setReportLogger(_:)`) and `Fetcher`'s retries \
                and give-ups (`Fetcher.setEventLogger(_:)`) to a swift-log `Logger`, with structured \
                metadata. Adds apple/swift-log.
                """
        ),
        .trait(
            name: "Metrics",
            description: """
                `MetricsReporter`: samples the statistics of `MemoryCache`s, `JobQueue`s, `Fetcher`s, \
                `AsyncSemaphore`s and named locks into swift-metrics counters and gauges, off their hot paths; \
                with `Lifecycle`, a `Service`. Adds apple/swift-metrics.
                """
        ),
        .trait(
            name: "Lifecycle",
            description: """
                `JobQueueService` and `FetcherService`: a `JobQueue` and a `Fetcher` as swift-service-lifecycle \
                `Service`s that shut them down gracefully with their `ServiceGroup`. Adds swift-server/swift-service-lifecycle (with \
                apple/swift-log, apple/swift-async-algorithms and apple/swift-collections).
                """
        ),
        .trait(
            name: "AsyncHTTPClient",
            description: """
                `HTTPClientTransport`: AsyncHTTPClient's `HTTPClient` as the `HTTPTransport` of a `Fetcher`, \
                over SwiftNIO in place of `URLSession`. Adds swift-server/async-http-client (with swift-nio and \
                the packages it needs).
                """
        ),
        .trait(
            name: "ModelChecking",
            description: """
                For Baton's own tests only: the atomics and futex calls of `Lock`, `RecursiveLock`, \
                `ReadWriteLock` and `Future`'s completion go through a seam that the model checker's \
                scheduler drives. Never enable it in a program: every lock operation then pays a check.
                """
        ),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-atomics", from: "1.3.0"),
        // The Macros trait only: the `@Synchronized` compiler plugin and its expansion tests.
        .package(url: "https://github.com/swiftlang/swift-syntax", from: "603.0.1"),
        // The Logging trait only.
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        // The Metrics trait only.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.4.1"),
        // The Lifecycle trait only.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        // The AsyncHTTPClient trait only (swift-nio comes with it).
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        // Tests only: a manual clock (`TestClock`) for timeouts and rate limits.
        .package(url: "https://github.com/pointfreeco/swift-clocks", from: "1.1.1"),
    ],
    targets: [
        // Platform shims Swift cannot express (the variadic futex call, a spin hint, the affinity count).
        .target(name: "CBatonPlatform"),
        // What several modules share, once, at `package` access: the C library's import, per-thread
        // slots, `Duration` conversions, the processor count, a seeded generator. No Foundation.
        .target(name: "BatonInternals", dependencies: ["CBatonPlatform"]),
        .target(
            name: "BatonLocks",
            dependencies: ["CBatonPlatform", "BatonInternals", atomics, logging, metrics, lifecycle],
            swiftSettings: modelChecking),
        .target(name: "BatonCache", dependencies: ["BatonLocks", "BatonInternals", "CBatonPlatform", atomics]),
        .target(name: "BatonJobs", dependencies: ["BatonLocks", "BatonInternals", atomics, lifecycle]),
        .target(
            name: "BatonFutures", dependencies: ["BatonLocks", "BatonInternals", atomics], swiftSettings: modelChecking),
        .target(
            name: "BatonHTTP",
            dependencies: ["BatonFutures", "BatonLocks", "BatonCache", logging, lifecycle] + asyncHTTPClient),
        .target(name: "Baton", dependencies: ["BatonLocks", "BatonCache", "BatonJobs", "BatonFutures", "BatonHTTP"]),
        // Without the Macros trait no swift-syntax is fetched: the plugin is an empty tool that
        // nothing uses, and BatonMacros warns that `@Synchronized` needs the trait.
        // The expansions are a library of their own, which the plugin forwards to and the tests
        // expand through: a test target that depends on a macro target is built for the host,
        // and with it every test target and all they depend on (swift-nio and the rest), a
        // second time beside the build for the target.
        .target(
            name: "BatonMacrosExpansion",
            dependencies: ["SwiftSyntax", "SwiftSyntaxBuilder", "SwiftSyntaxMacros", "SwiftDiagnostics"].map {
                .product(name: $0, package: "swift-syntax", condition: macros)
            }
        ),
        .macro(
            name: "BatonMacrosPlugin",
            dependencies: [.target(name: "BatonMacrosExpansion", condition: macros)]
                + ["SwiftSyntax", "SwiftSyntaxMacros", "SwiftCompilerPlugin"].map {
                    .product(name: $0, package: "swift-syntax", condition: macros)
                }
        ),
        .target(
            name: "BatonMacros", dependencies: ["BatonLocks", .target(name: "BatonMacrosPlugin", condition: macros)]),
        .target(name: "BatonTesting", dependencies: ["BatonLocks", "BatonInternals", atomics]),

        // Test support, part of no product: running suites off the cooperative pool, racing
        // threads, counting releases; the model checker (its scheduler and explorer); the HTTP
        // test servers on 127.0.0.1 (plain sockets: no server framework to build for the tests).
        .target(
            name: "BatonTestSupport", dependencies: ["BatonInternals", "BatonTesting", logging, lifecycle],
            path: "Tests/BatonTestSupport"),
        .target(
            name: "BatonModelChecking", dependencies: ["BatonLocks", "BatonInternals", "BatonTesting", atomics],
            path: "Tests/BatonModelChecking", swiftSettings: modelChecking
        ),
        .target(name: "BatonHTTPTestSupport", path: "Tests/BatonHTTPTestSupport"),

        .testTarget(name: "BatonInternalsTests", dependencies: ["BatonInternals", atomics]),
        .testTarget(
            name: "BatonLocksTests",
            dependencies: ["BatonLocks", "BatonModelChecking", atomics, clocks, logging, lifecycle] + testSupport
                + metricsTestKit,
            swiftSettings: modelChecking),
        .testTarget(name: "BatonCacheTests", dependencies: ["BatonCache", atomics] + testSupport + metricsTestKit),
        .testTarget(
            name: "BatonJobsTests",
            dependencies: [
                "BatonJobs", "BatonInternals", "BatonTestSupport", clocks, lifecycle,
            ] + metricsTestKit + [
                .product(
                    name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle",
                    condition: .when(traits: ["Lifecycle"]))
            ]),
        .testTarget(
            name: "BatonFuturesTests",
            dependencies: ["BatonFutures", "BatonLocks", "BatonModelChecking", clocks] + testSupport,
            swiftSettings: modelChecking),
        .testTarget(
            name: "BatonHTTPTests",
            dependencies: [
                "BatonHTTP", "BatonCache", "BatonFutures", "BatonLocks", "BatonTestSupport", "BatonHTTPTestSupport",
                clocks, logging, lifecycle,
            ] + metricsTestKit + asyncHTTPClient
        ),
        .testTarget(
            name: "BatonMacrosTests",
            dependencies: [
                "BatonLocks",
                .target(name: "BatonMacros", condition: macros),
                .target(name: "BatonMacrosExpansion", condition: macros),
                .product(name: "SwiftSyntaxMacrosGenericTestSupport", package: "swift-syntax", condition: macros),
                .product(name: "SwiftSyntaxMacroExpansion", package: "swift-syntax", condition: macros),
            ]
        ),
        .testTarget(
            name: "BatonTestingTests",
            dependencies: [
                "BatonTesting", "BatonTestSupport", "BatonLocks", "BatonCache", atomics,
                .target(name: "BatonMacros", condition: macros),
            ]
        ),
        // The After code of the migration guides in Sources/Baton/Baton.docc, and every block of
        // BatonTesting's article and of "Running Baton in a service", verbatim, run by tests (Scripts/check-guides checks that every
        // block is here).
        .testTarget(
            name: "BatonGuideTests",
            dependencies: [
                "Baton", "BatonTesting", "BatonTestSupport", "BatonHTTPTestSupport", logging, lifecycle,
                .target(name: "BatonMacros", condition: macros),
            ] + metricsTestKit
        ),
    ],
    swiftLanguageModes: [.v6]
)

// Members are visible only where their module is imported. Without it, a module that imports
// ServiceLifecycle (the Lifecycle trait) saw the standard library's `AtomicRepresentation` beside
// swift-atomics' in every file, and in every module that imports it.
for target in package.targets {
    target.swiftSettings = (target.swiftSettings ?? []) + [.enableUpcomingFeature("MemberImportVisibility")]
}
