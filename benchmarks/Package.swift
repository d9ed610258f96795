// swift-tools-version:6.1
// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import PackageDescription

// The benchmark (`bench`), the runnable examples (`examples`) and their tests, in a package of their own so that their
// dependencies (the command line, the NIO peers, latency histograms) never reach the graph of a package that depends
// on Threading. Run from the repository root: `swift run --package-path benchmarks -c release bench`.
let package = Package(
    name: "ThreadingBenchmarks",
    products: [
        .executable(name: "bench", targets: ["bench"]),
        .executable(name: "examples", targets: ["examples"]),
    ],
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
                // NIO's ThreadSpecificVariable, the peer of ThreadLocal in the `threadlocal` family.
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            path: "BenchKit"
        ),
        .executableTarget(name: "bench", dependencies: ["BenchKit"], path: "bench"),
        .testTarget(name: "BenchTests", dependencies: ["BenchKit"]),
        // Lessons about threads, queues and jobs, runnable: `swift run --package-path benchmarks examples --list`.
        .executableTarget(
            name: "examples",
            dependencies: [
                .product(name: "Threading", package: "Threading"),
                .product(name: "CThreading", package: "Threading"),
            ],
            path: "Examples"
        ),
        // Runs the `examples` binary (the dependency makes `swift test` build it) and checks its output.
        .testTarget(name: "ExamplesTests", dependencies: ["examples"]),
    ],
    swiftLanguageModes: [.v6]
)
