// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Threading

/// Ours: the cache confined to Threading's `SerialQueue`, every access through `sync`.
///
/// `@unchecked Sendable`: `storage` is only touched by work running on `queue`, one item at a time.
public final class SerialQueueSyncCache: CacheStrategy, @unchecked Sendable {
    public static let name = "SerialQueue sync"
    public static let id = "serialqueue-sync"
    public static let kind = StrategyKind.ours
    public static let summary = "Threading SerialQueue, queue.sync for reads and writes"

    private let queue = SerialQueue(label: "bench.cache.serial-sync")
    private let storage: DictionaryCell

    public init(keyCount: Int) { storage = DictionaryCell(keyCount: keyCount) }

    deinit { storage.destroy() }

    @inline(__always)
    public func read(_ key: Int) -> Int? { queue.sync { storage.get(key) } }

    @inline(__always)
    public func write(_ key: Int, _ value: Int) { queue.sync { storage.set(key, value) } }
}

/// Ours: the cache confined to Threading's `SerialQueue`, writes `async`, reads `sync`.
///
/// `@unchecked Sendable`: `storage` is only touched by work running on `queue`, one item at a time.
public final class SerialQueueAsyncWriteCache: CacheStrategy, @unchecked Sendable {
    public static let name = "SerialQueue async-write"
    public static let id = "serialqueue-async-write"
    public static let kind = StrategyKind.ours
    public static let summary = "Threading SerialQueue, queue.async for writes and queue.sync for reads"

    private let queue = SerialQueue(label: "bench.cache.serial-async-write")
    private let storage: DictionaryCell

    public init(keyCount: Int) { storage = DictionaryCell(keyCount: keyCount) }

    deinit { storage.destroy() }

    @inline(__always)
    public func read(_ key: Int) -> Int? { queue.sync { storage.get(key) } }

    @inline(__always)
    public func write(_ key: Int, _ value: Int) { queue.async { self.storage.set(key, value) } }

    public func quiesce() { queue.sync {} }
}
