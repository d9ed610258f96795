// swift-tools-version:6.1
// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import PackageDescription

// What a consumer builds: the `Threading` library, its C layer and the system liburcu. No dependencies and no unsafe
// flags (SwiftPM refuses those in a version-based dependency): the C warning flags live in the Makefile and CI. The
// benchmark and the runnable examples are a nested package in `benchmarks/` with their own dependencies.
let package = Package(
    name: "Threading",
    products: [
        // The API: `import Threading`.
        .library(name: "Threading", targets: ["Threading"]),
        // The C layer's plain C (and C++-compatible) headers in `include/`, for C and C++ servers; from Swift an
        // implementation detail whose API may change.
        .library(name: "CThreading", targets: ["CThreading"]),
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
        .target(name: "Threading", dependencies: ["CThreading"], path: "Sources/Threading"),
        .testTarget(name: "CThreadingTests", dependencies: ["CThreading", "CTestSupport"]),
        // C helpers for the tests (heap statistics for the soak, the kernel's membarrier answer).
        .target(name: "CTestSupport", path: "Tests/CTestSupport"),
        .testTarget(name: "ThreadingTests", dependencies: ["Threading", "CThreading", "CTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
