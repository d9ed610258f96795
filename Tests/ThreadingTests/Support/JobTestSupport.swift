// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Synchronization

@testable import Threading

/// An append-only, thread-safe log of integers (the `print` of the ordering scenarios).
final class JobLog: Sendable {
    private let entries = LockedValue<[Int]>([])

    func append(_ value: Int) { entries.withLock { $0.append(value) } }

    var values: [Int] { entries.withLock { $0 } }
}

/// Polls `condition` every millisecond until it holds or `seconds` passed; returns whether it held.
func jobTestWait(seconds: Double = 10, _ condition: () -> Bool) -> Bool {
    let deadline = cthr_clock_now_ns() + UInt64(seconds * 1_000_000_000)
    while !condition() {
        if cthr_clock_now_ns() >= deadline { return condition() }
        _ = cthr_sleep_ns(1_000_000)
    }
    return true
}

/// A test error.
struct JobTestError: Error, Equatable {
    let tag: Int
}
