// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Threading

/// Ours: the cache guarded by Threading's `SpinLock`.
///
/// `@unchecked Sendable`: `storage` is only touched while `lock` is held.
public final class SpinLockCache<Shape: CacheShape>: CacheStrategy, @unchecked Sendable {
    public static var name: String { "SpinLock" }
    public static var id: String { "spinlock" }
    public static var kind: StrategyKind { .ours }
    public static var summary: String { "Threading SpinLock around a [Key: Value]" }

    private let lock = SpinLock()
    private let storage: DictionaryCell<Shape>

    public init(keyCount: Int) { storage = DictionaryCell<Shape>(keyCount: keyCount) }

    deinit { storage.destroy() }

    @inline(__always)
    public func read(_ key: Shape.Key) -> Int? { lock.withLock { storage.get(key) } }

    @inline(__always)
    public func write(_ key: Shape.Key, _ value: Shape.Value) { lock.withLock { storage.set(key, value) } }
}
