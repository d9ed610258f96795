// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Threading

/// Ours: the cache guarded by Threading's `ReadWriteLock`: shared reads, exclusive writes.
///
/// `@unchecked Sendable`: `storage` is read under the read lock and written under the write lock.
public final class ReadWriteLockCache<Shape: CacheShape>: CacheStrategy, @unchecked Sendable {
    public static var name: String { "ReadWriteLock" }
    public static var id: String { "rwlock" }
    public static var kind: StrategyKind { .ours }
    public static var summary: String {
        "Threading ReadWriteLock (read lock for reads, write lock for writes) around a [Key: Value]"
    }

    private let lock = ReadWriteLock()
    private let storage: DictionaryCell<Shape>

    public init(keyCount: Int) { storage = DictionaryCell<Shape>(keyCount: keyCount) }

    deinit { storage.destroy() }

    @inline(__always)
    public func read(_ key: Shape.Key) -> Int? { lock.withReadLock { storage.get(key) } }

    @inline(__always)
    public func write(_ key: Shape.Key, _ value: Shape.Value) { lock.withWriteLock { storage.set(key, value) } }
}
