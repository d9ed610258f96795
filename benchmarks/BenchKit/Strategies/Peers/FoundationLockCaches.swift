// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Foundation

/// Peer: the cache guarded by Foundation's `NSLock`.
///
/// `@unchecked Sendable`: `storage` is only touched while `lock` is held.
public final class NSLockCache: CacheStrategy, @unchecked Sendable {
    public static let name = "NSLock"
    public static let id = "nslock"
    public static let kind = StrategyKind.peer
    public static let summary = "Foundation NSLock around a [Int: Int] (lock/unlock per read and write)"

    private let lock = NSLock()
    private let storage: DictionaryCell

    public init(keyCount: Int) { storage = DictionaryCell(keyCount: keyCount) }

    deinit { storage.destroy() }

    @inline(__always)
    public func read(_ key: Int) -> Int? {
        lock.lock()
        defer { lock.unlock() }
        return storage.get(key)
    }

    @inline(__always)
    public func write(_ key: Int, _ value: Int) {
        lock.lock()
        defer { lock.unlock() }
        storage.set(key, value)
    }
}

/// Peer: the cache guarded by Foundation's `NSRecursiveLock`.
///
/// `@unchecked Sendable`: `storage` is only touched while `lock` is held.
public final class NSRecursiveLockCache: CacheStrategy, @unchecked Sendable {
    public static let name = "NSRecursiveLock"
    public static let id = "nsrecursivelock"
    public static let kind = StrategyKind.peer
    public static let summary = "Foundation NSRecursiveLock around a [Int: Int]"

    private let lock = NSRecursiveLock()
    private let storage: DictionaryCell

    public init(keyCount: Int) { storage = DictionaryCell(keyCount: keyCount) }

    deinit { storage.destroy() }

    @inline(__always)
    public func read(_ key: Int) -> Int? {
        lock.lock()
        defer { lock.unlock() }
        return storage.get(key)
    }

    @inline(__always)
    public func write(_ key: Int, _ value: Int) {
        lock.lock()
        defer { lock.unlock() }
        storage.set(key, value)
    }
}
