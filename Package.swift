// swift-tools-version:6.1
// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import PackageDescription

// What a consumer builds: the `Threading` library, its C layer and the system liburcu. No dependencies unless the
// consumer enables a trait, and no unsafe flags (SwiftPM refuses those in a version-based dependency): the C warning
// flags live in the Makefile and CI. The benchmark and the runnable examples are a nested package in `benchmarks/`
// with their own dependencies.
//
// Integrations are package traits, all off by default (SE-0450): each guards only its dependency (`.when(traits:)`)
// and its adapter code (`#if <Trait>` in `Sources/Threading/Integrations/`); the core API never depends on one. A
// dependency whose trait is off is neither fetched nor pinned in the consumer's `Package.resolved`
// (`make consumer-check` proves it for every combination).
let package = Package(
    name: "Threading",
    products: [
        // The API: `import Threading`.
        .library(name: "Threading", targets: ["Threading"]),
        // The C layer's plain C (and C++-compatible) headers in `include/`, for C and C++ servers; from Swift an
        // implementation detail whose API may change.
        .library(name: "CThreading", targets: ["CThreading"]),
    ],
    traits: [
        .trait(
            name: "LoggingSupport",
            description: "Sends the runtime's reports to a swift-log Logger (RuntimeObservation.log(to:))."
        ),
        .trait(
            name: "MetricsSupport",
            description: "Exports worker pool statistics through swift-metrics (WorkerPoolMetrics)."
        ),
        .trait(
            name: "ServiceLifecycleSupport",
            description: "Runs a WorkerPool (and WorkerPoolMetrics) as a swift-service-lifecycle Service; enables "
                + "LoggingSupport, whose package service-lifecycle depends on anyway.",
            enabledTraits: ["LoggingSupport"]
        ),
        .default(enabledTraits: []),
    ],
    // Lower bounds: the releases the integrations are tested with (swift-log's InMemoryLogging, swift-metrics'
    // `factory:` initialisers, service-lifecycle's graceful-shutdown API).
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
    ],
    targets: [
        // liburcu (memb flavour, lock-free hash table): SwiftPM asks pkg-config for its flags and, when it is
        // missing, tells the user which package to install.
        .systemLibrary(
            name: "CURCU",
            path: "Sources/CURCU",
            pkgConfig: "liburcu-cds",
            providers: [.apt(["liburcu-dev"]), .yum(["userspace-rcu-devel"])]
        ),
        // The C layer: every system call of the runtime. Public headers live in the top-level `include/` so C and
        // C++ servers can use them directly.
        .target(
            name: "CThreading",
            dependencies: ["CURCU"],
            path: ".",
            sources: ["Sources/CThreading"],
            publicHeadersPath: "include",
            // The memb flavour is not in liburcu-cds' pkg-config libraries, so it is named here (a safe setting).
            linkerSettings: [
                .linkedLibrary("urcu-memb"),
                .linkedLibrary("urcu-cds"),
                .linkedLibrary("urcu-common"),
                .linkedLibrary("pthread"),
                // dladdr1 (the liburcu version check) lives in libdl before glibc 2.34.
                .linkedLibrary("dl"),
            ]
        ),
        .target(
            name: "Threading",
            dependencies: [
                "CThreading",
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["LoggingSupport"])),
                .product(name: "Metrics", package: "swift-metrics", condition: .when(traits: ["MetricsSupport"])),
                .product(
                    name: "ServiceLifecycle",
                    package: "swift-service-lifecycle",
                    condition: .when(traits: ["ServiceLifecycleSupport"])
                ),
            ],
            path: "Sources/Threading"
        ),
        .testTarget(name: "CThreadingTests", dependencies: ["CThreading", "CTestSupport"]),
        // C helpers for the tests (heap statistics for the soak, the kernel's membarrier answer, a lock waiter made of C
        // alone for forked children).
        .target(name: "CTestSupport", dependencies: ["CThreading"], path: "Tests/CTestSupport"),
        .testTarget(
            name: "ThreadingTests",
            dependencies: [
                "Threading", "CThreading", "CTestSupport",
                // The integrations' tests (Tests/ThreadingTests/Integrations/) use the packages' own test kits.
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["LoggingSupport"])),
                .product(
                    name: "InMemoryLogging",
                    package: "swift-log",
                    condition: .when(traits: ["LoggingSupport"])
                ),
                .product(
                    name: "MetricsTestKit",
                    package: "swift-metrics",
                    condition: .when(traits: ["MetricsSupport"])
                ),
                .product(
                    name: "ServiceLifecycleTestKit",
                    package: "swift-service-lifecycle",
                    condition: .when(traits: ["ServiceLifecycleSupport"])
                ),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
