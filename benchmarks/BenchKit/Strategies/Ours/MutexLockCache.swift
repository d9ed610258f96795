// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Threading

/// Ours: the cache guarded by Threading's `MutexLock`.
///
/// `@unchecked Sendable`: `storage` is only touched while `lock` is held.
public final class MutexLockCache: CacheStrategy, @unchecked Sendable {
    public static let name = "MutexLock"
    public static let id = "mutexlock"
    public static let kind = StrategyKind.ours
    public static let summary = "Threading MutexLock around a [Int: Int] (withLock per read and write)"

    private let lock = MutexLock()
    private let storage: DictionaryCell

    public init(keyCount: Int) { storage = DictionaryCell(keyCount: keyCount) }

    deinit { storage.destroy() }

    @inline(__always)
    public func read(_ key: Int) -> Int? { lock.withLock { storage.get(key) } }

    @inline(__always)
    public func write(_ key: Int, _ value: Int) { lock.withLock { storage.set(key, value) } }
}
