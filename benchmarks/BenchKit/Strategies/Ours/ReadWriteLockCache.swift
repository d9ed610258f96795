// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Threading

/// Ours: the cache guarded by Threading's `ReadWriteLock`: shared reads, exclusive writes.
///
/// `@unchecked Sendable`: `storage` is read under the read lock and written under the write lock.
public final class ReadWriteLockCache: CacheStrategy, @unchecked Sendable {
    public static let name = "ReadWriteLock"
    public static let id = "rwlock"
    public static let kind = StrategyKind.ours
    public static let summary =
        "Threading ReadWriteLock (read lock for reads, write lock for writes) around a [Int: Int]"

    private let lock = ReadWriteLock()
    private let storage: DictionaryCell

    public init(keyCount: Int) { storage = DictionaryCell(keyCount: keyCount) }

    deinit { storage.destroy() }

    @inline(__always)
    public func read(_ key: Int) -> Int? { lock.withReadLock { storage.get(key) } }

    @inline(__always)
    public func write(_ key: Int, _ value: Int) { lock.withWriteLock { storage.set(key, value) } }
}
