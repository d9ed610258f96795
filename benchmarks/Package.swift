// swift-tools-version:6.1
// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import PackageDescription

// The benchmark (`bench`) and its tests, in a package of their own so that their dependencies (the command line, the
// NIO peers, latency histograms) never reach the graph of a package that depends on Threading. Run from the repository
// root: `swift run --package-path benchmarks -c release bench`. The runnable examples (and the Hummingbird server
// that `bench http` loads) are the nested package in `examples/`.
let package = Package(
    name: "ThreadingBenchmarks",
    products: [.executable(name: "bench", targets: ["bench"])],
    dependencies: [
        .package(name: "Threading", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
    ],
    targets: [
        // Benchmark-only C helpers: the reference spin lock, raw liburcu calls, clocks.
        .target(
            name: "CBenchSupport",
            dependencies: [.product(name: "CThreading", package: "Threading")],
            path: "CBenchSupport"
        ),
        // The benchmark: a thin executable over BenchKit (workloads, strategies, harness, output), which the tests use.
        .target(
            name: "BenchKit",
            dependencies: [
                .product(name: "Threading", package: "Threading"),
                "CBenchSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            path: "BenchKit"
        ),
        .executableTarget(name: "bench", dependencies: ["BenchKit"], path: "bench"),
        .testTarget(name: "BenchTests", dependencies: ["BenchKit"]),
    ],
    swiftLanguageModes: [.v6]
)
