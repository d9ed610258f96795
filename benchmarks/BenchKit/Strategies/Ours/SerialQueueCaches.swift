// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Threading

/// Ours: the cache confined to Threading's `SerialQueue`, every access through `sync`.
///
/// `@unchecked Sendable`: `storage` is only touched by work running on `queue`, one item at a time.
public final class SerialQueueSyncCache<Shape: CacheShape>: CacheStrategy, @unchecked Sendable {
    public static var name: String { "SerialQueue sync" }
    public static var id: String { "serialqueue-sync" }
    public static var kind: StrategyKind { .ours }
    public static var summary: String { "Threading SerialQueue, queue.sync for reads and writes" }

    private let queue = SerialQueue(label: "bench.cache.serial-sync")
    private let storage: DictionaryCell<Shape>

    public init(keyCount: Int) { storage = DictionaryCell<Shape>(keyCount: keyCount) }

    deinit { storage.destroy() }

    @inline(__always)
    public func read(_ key: Shape.Key) -> Int? { queue.sync { storage.get(key) } }

    @inline(__always)
    public func write(_ key: Shape.Key, _ value: Shape.Value) { queue.sync { storage.set(key, value) } }
}

/// Ours: the cache confined to Threading's `SerialQueue`, writes `async`, reads `sync`.
///
/// `@unchecked Sendable`: `storage` is only touched by work running on `queue`, one item at a time.
public final class SerialQueueAsyncWriteCache<Shape: CacheShape>: CacheStrategy, @unchecked Sendable {
    public static var name: String { "SerialQueue async-write" }
    public static var id: String { "serialqueue-async-write" }
    public static var kind: StrategyKind { .ours }
    public static var summary: String { "Threading SerialQueue, queue.async for writes and queue.sync for reads" }

    private let queue = SerialQueue(label: "bench.cache.serial-async-write")
    private let storage: DictionaryCell<Shape>

    public init(keyCount: Int) { storage = DictionaryCell<Shape>(keyCount: keyCount) }

    deinit { storage.destroy() }

    @inline(__always)
    public func read(_ key: Shape.Key) -> Int? { queue.sync { storage.get(key) } }

    @inline(__always)
    public func write(_ key: Shape.Key, _ value: Shape.Value) { queue.async { self.storage.set(key, value) } }

    public func quiesce() { queue.sync {} }
}
