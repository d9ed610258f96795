// swift-tools-version:6.1
// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import PackageDescription

// The runnable examples, in a package of their own so that their dependencies (Hummingbird and what it brings) never
// reach the graph of a package that depends on Threading:
// - `examples`: lessons about threads, queues and jobs (`swift run --package-path examples examples --list`), checked
//   by ExamplesTests;
// - `hummingbird-server`: a Hummingbird 2 server whose blocking endpoint offloads to Threading's blocking pool or to
//   its peers (`bench http` in `benchmarks/` loads it; build it with
//   `swift build --package-path examples -c release --product hummingbird-server`). It adopts Threading as a service
//   would, with all three traits: the runtime's reports in its logger, the pools' metrics, and the pools in its
//   `ServiceGroup`, drained after the HTTP server stopped;
// - `c/counters.c`: the C layer used from C through pkg-config (`make c-example`).
let package = Package(
    name: "ThreadingExamples",
    products: [
        .executable(name: "examples", targets: ["examples"]),
        .executable(name: "hummingbird-server", targets: ["hummingbird-server"]),
        .library(name: "HummingbirdExample", targets: ["HummingbirdExample"]),
    ],
    dependencies: [
        .package(
            name: "Threading",
            path: "..",
            traits: ["LoggingSupport", "MetricsSupport", "ServiceLifecycleSupport"]
        ),
        // No traits: the server needs neither swift-configuration nor full Foundation.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // Already in Hummingbird's graph; named here because the server imports them.
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        // Lessons about threads, queues and jobs, runnable: `swift run --package-path examples examples --list`.
        .executableTarget(
            name: "examples",
            dependencies: [
                .product(name: "Threading", package: "Threading"),
                .product(name: "CThreading", package: "Threading"),
            ]
        ),
        // Runs the `examples` binary (the dependency makes `swift test` build it) and checks its output.
        .testTarget(name: "ExamplesTests", dependencies: ["examples"]),
        // The Hummingbird application: routes, the offload modes and the pools they use.
        .target(
            name: "HummingbirdExample",
            dependencies: [
                .product(name: "Threading", package: "Threading"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The server's command line: `hummingbird-server --port 0 --offload threading-blocking`.
        .executableTarget(name: "hummingbird-server", dependencies: ["HummingbirdExample"]),
        // The server's pieces without a socket: its command line and every offload mode.
        .testTarget(name: "HummingbirdExampleTests", dependencies: ["HummingbirdExample"]),
    ],
    swiftLanguageModes: [.v6]
)
