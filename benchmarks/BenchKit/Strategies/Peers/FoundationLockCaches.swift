// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Foundation

/// Peer: the cache guarded by Foundation's `NSLock`.
///
/// `@unchecked Sendable`: `storage` is only touched while `lock` is held.
public final class NSLockCache<Shape: CacheShape>: CacheStrategy, @unchecked Sendable {
    public static var name: String { "NSLock" }
    public static var id: String { "nslock" }
    public static var kind: StrategyKind { .peer }
    public static var summary: String { "Foundation NSLock around a [Key: Value] (lock/unlock per read and write)" }

    private let lock = NSLock()
    private let storage: DictionaryCell<Shape>

    public init(keyCount: Int) { storage = DictionaryCell<Shape>(keyCount: keyCount) }

    deinit { storage.destroy() }

    @inline(__always)
    public func read(_ key: Shape.Key) -> Int? {
        lock.lock()
        defer { lock.unlock() }
        return storage.get(key)
    }

    @inline(__always)
    public func write(_ key: Shape.Key, _ value: Shape.Value) {
        lock.lock()
        defer { lock.unlock() }
        storage.set(key, value)
    }
}

/// Peer: the cache guarded by Foundation's `NSRecursiveLock`.
///
/// `@unchecked Sendable`: `storage` is only touched while `lock` is held.
public final class NSRecursiveLockCache<Shape: CacheShape>: CacheStrategy, @unchecked Sendable {
    public static var name: String { "NSRecursiveLock" }
    public static var id: String { "nsrecursivelock" }
    public static var kind: StrategyKind { .peer }
    public static var summary: String { "Foundation NSRecursiveLock around a [Key: Value]" }

    private let lock = NSRecursiveLock()
    private let storage: DictionaryCell<Shape>

    public init(keyCount: Int) { storage = DictionaryCell<Shape>(keyCount: keyCount) }

    deinit { storage.destroy() }

    @inline(__always)
    public func read(_ key: Shape.Key) -> Int? {
        lock.lock()
        defer { lock.unlock() }
        return storage.get(key)
    }

    @inline(__always)
    public func write(_ key: Shape.Key, _ value: Shape.Value) {
        lock.lock()
        defer { lock.unlock() }
        storage.set(key, value)
    }
}
