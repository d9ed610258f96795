// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Threading

/// Ours: the cache guarded by Threading's `SpinLock`.
///
/// `@unchecked Sendable`: `storage` is only touched while `lock` is held.
public final class SpinLockCache: CacheStrategy, @unchecked Sendable {
    public static let name = "SpinLock"
    public static let id = "spinlock"
    public static let kind = StrategyKind.ours
    public static let summary = "Threading SpinLock around a [Int: Int]"

    private let lock = SpinLock()
    private let storage: DictionaryCell

    public init(keyCount: Int) { storage = DictionaryCell(keyCount: keyCount) }

    deinit { storage.destroy() }

    @inline(__always)
    public func read(_ key: Int) -> Int? { lock.withLock { storage.get(key) } }

    @inline(__always)
    public func write(_ key: Int, _ value: Int) { lock.withLock { storage.set(key, value) } }
}
