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
        .executableTarget(name: "bench", dependencies: ["Threading"], path: "benchmarks/bench"),
        // The source documents' lessons, runnable: `swift run examples --list`.
        .executableTarget(name: "examples", dependencies: ["Threading", "CThreading"], path: "Examples"),
        .testTarget(name: "CThreadingTests", dependencies: ["CThreading"]),
        .testTarget(name: "ThreadingTests", dependencies: ["Threading", "CThreading"]),
        // Runs the `examples` binary (the dependency makes `swift test` build it) and checks its output.
        .testTarget(name: "ExamplesTests", dependencies: ["examples"]),
    ],
    swiftLanguageModes: [.v6]
)
