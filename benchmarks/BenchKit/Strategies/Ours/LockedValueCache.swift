// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Threading

/// Ours: the cache inside Threading's `LockedValue`.
///
/// `@unchecked Sendable`: the only state is the `LockedValue`, whose value is only reached under its lock.
public final class LockedValueCache: CacheStrategy, @unchecked Sendable {
    public static let name = "LockedValue"
    public static let id = "lockedvalue"
    public static let kind = StrategyKind.ours
    public static let summary = "Threading LockedValue<[Int: Int]> (withLock per read and write)"

    private let state: LockedValue<[Int: Int]>

    public init(keyCount: Int) { state = LockedValue(prefilledCache(keyCount: keyCount)) }

    @inline(__always)
    public func read(_ key: Int) -> Int? { state.withLock { $0[key] } }

    @inline(__always)
    public func write(_ key: Int, _ value: Int) { state.withLock { $0[key] = value } }
}
