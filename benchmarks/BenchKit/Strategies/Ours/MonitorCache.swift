// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Threading

/// Ours: the cache as the state of Threading's `Monitor` (a lock plus condition; no waiter here).
///
/// `@unchecked Sendable`: the only state is the `Monitor`, whose state is only reached under its lock.
public final class MonitorCache: CacheStrategy, @unchecked Sendable {
    public static let name = "Monitor"
    public static let id = "monitor"
    public static let kind = StrategyKind.ours
    public static let summary = "Threading Monitor<[Int: Int]> (withLock per read and write)"

    private let monitor: Monitor<[Int: Int]>

    public init(keyCount: Int) { monitor = Monitor(prefilledCache(keyCount: keyCount)) }

    @inline(__always)
    public func read(_ key: Int) -> Int? { monitor.withLock { $0[key] } }

    @inline(__always)
    public func write(_ key: Int, _ value: Int) { monitor.withLock { $0[key] = value } }
}
