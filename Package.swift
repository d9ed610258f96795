// swift-tools-version:6.1
// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import PackageDescription

let package = Package(
    name: "Threading",
    products: [
        .library(name: "Threading", targets: ["Threading"]),
        .library(name: "CThreading", targets: ["CThreading"]),
        .executable(name: "bench", targets: ["bench"]),
        .executable(name: "examples", targets: ["examples"]),
    ],
    dependencies: [
        // Benchmark only: the command line, the NIO peers (NIOLock, NIOLockedValueBox) and latency histograms.
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
    ],
    targets: [
        // The C layer: every system call of the runtime. Public headers live in the top-level `include/` so C and
        // C++ servers can use them directly; liburcu (memb flavour and the lock-free hash table) is linked here.
        .target(
            name: "CThreading",
            path: ".",
            sources: ["Sources/CThreading"],
            publicHeadersPath: "include",
            cSettings: [.unsafeFlags(["-Wall", "-Wextra", "-Werror=implicit-function-declaration"])],
            linkerSettings: [
                .linkedLibrary("urcu-memb"),
                .linkedLibrary("urcu-cds"),
                .linkedLibrary("urcu-common"),
                .linkedLibrary("pthread"),
            ]
        ),
        .target(name: "Threading", dependencies: ["CThreading"], path: "Sources/Threading"),
        // The benchmark: a thin executable over BenchKit (workloads, strategies, harness, output), which the tests use.
        .target(
            name: "CBenchSupport",
            path: "benchmarks/CBenchSupport",
            cSettings: [.unsafeFlags(["-Wall", "-Wextra"])]
        ),
        .target(
            name: "BenchKit",
            dependencies: [
                "Threading",
                "CBenchSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            path: "benchmarks/BenchKit"
        ),
        .executableTarget(name: "bench", dependencies: ["BenchKit"], path: "benchmarks/bench"),
        .testTarget(name: "CThreadingTests", dependencies: ["CThreading", "CTestSupport"]),
        // C helpers for the tests (heap statistics for the soak, the kernel's membarrier answer).
        .target(name: "CTestSupport", path: "Tests/CTestSupport", cSettings: [.unsafeFlags(["-Wall", "-Wextra"])]),
        .testTarget(name: "ThreadingTests", dependencies: ["Threading", "CThreading", "CTestSupport"]),
        .testTarget(name: "BenchTests", dependencies: ["BenchKit"]),
        // The source documents' lessons, runnable: `swift run examples --list`.
        .executableTarget(name: "examples", dependencies: ["Threading", "CThreading"], path: "Examples"),
        // Runs the `examples` binary (the dependency makes `swift test` build it) and checks its output.
        .testTarget(name: "ExamplesTests", dependencies: ["examples"]),
    ],
    swiftLanguageModes: [.v6]
)
