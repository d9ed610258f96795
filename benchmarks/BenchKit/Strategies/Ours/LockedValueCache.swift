// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Threading

/// Ours: the cache inside Threading's `LockedValue`.
///
/// `@unchecked Sendable`: the only state is the `LockedValue`, whose value is only reached under its lock.
public final class LockedValueCache<Shape: CacheShape>: CacheStrategy, @unchecked Sendable {
    public static var name: String { "LockedValue" }
    public static var id: String { "lockedvalue" }
    public static var kind: StrategyKind { .ours }
    public static var summary: String { "Threading LockedValue<[Key: Value]> (withLock per read and write)" }

    private let state: LockedValue<[Shape.Key: Shape.Value]>

    public init(keyCount: Int) { state = LockedValue(Shape.prefilled(keyCount: keyCount)) }

    @inline(__always)
    public func read(_ key: Shape.Key) -> Int? { state.withLock { $0.token(key, Shape.self) } }

    @inline(__always)
    public func write(_ key: Shape.Key, _ value: Shape.Value) { state.withLock { $0[key] = value } }
}
