// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Threading

/// Ours: the cache guarded by Threading's `Semaphore` of value 1.
///
/// `@unchecked Sendable`: `storage` is only touched between `wait()` and `signal()`.
public final class SemaphoreCache<Shape: CacheShape>: CacheStrategy, @unchecked Sendable {
    public static var name: String { "Semaphore" }
    public static var id: String { "semaphore" }
    public static var kind: StrategyKind { .ours }
    public static var summary: String { "Threading Semaphore(value: 1) as a lock around a [Key: Value]" }

    private let semaphore = Semaphore(value: 1)
    private let storage: DictionaryCell<Shape>

    public init(keyCount: Int) { storage = DictionaryCell<Shape>(keyCount: keyCount) }

    deinit { storage.destroy() }

    @inline(__always)
    public func read(_ key: Shape.Key) -> Int? {
        semaphore.wait()
        defer { semaphore.signal() }
        return storage.get(key)
    }

    @inline(__always)
    public func write(_ key: Shape.Key, _ value: Shape.Value) {
        semaphore.wait()
        defer { semaphore.signal() }
        storage.set(key, value)
    }
}
