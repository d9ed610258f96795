// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Threading

/// Ours: the cache guarded by Threading's `Semaphore` of value 1.
///
/// `@unchecked Sendable`: `storage` is only touched between `wait()` and `signal()`.
public final class SemaphoreCache: CacheStrategy, @unchecked Sendable {
    public static let name = "Semaphore"
    public static let id = "semaphore"
    public static let kind = StrategyKind.ours
    public static let summary = "Threading Semaphore(value: 1) as a lock around a [Int: Int]"

    private let semaphore = Semaphore(value: 1)
    private let storage: DictionaryCell

    public init(keyCount: Int) { storage = DictionaryCell(keyCount: keyCount) }

    deinit { storage.destroy() }

    @inline(__always)
    public func read(_ key: Int) -> Int? {
        semaphore.wait()
        defer { semaphore.signal() }
        return storage.get(key)
    }

    @inline(__always)
    public func write(_ key: Int, _ value: Int) {
        semaphore.wait()
        defer { semaphore.signal() }
        storage.set(key, value)
    }
}
