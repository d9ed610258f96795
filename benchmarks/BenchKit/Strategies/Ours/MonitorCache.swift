// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Threading

/// Ours: the cache as the state of Threading's `Monitor` (a lock plus condition; no waiter here).
///
/// `@unchecked Sendable`: the only state is the `Monitor`, whose state is only reached under its lock.
public final class MonitorCache<Shape: CacheShape>: CacheStrategy, @unchecked Sendable {
    public static var name: String { "Monitor" }
    public static var id: String { "monitor" }
    public static var kind: StrategyKind { .ours }
    public static var summary: String { "Threading Monitor<[Key: Value]> (withLock per read and write)" }

    private let monitor: Monitor<[Shape.Key: Shape.Value]>

    public init(keyCount: Int) { monitor = Monitor(Shape.prefilled(keyCount: keyCount)) }

    @inline(__always)
    public func read(_ key: Shape.Key) -> Int? { monitor.withLock { $0.token(key, Shape.self) } }

    @inline(__always)
    public func write(_ key: Shape.Key, _ value: Shape.Value) { monitor.withLock { $0[key] = value } }
}
