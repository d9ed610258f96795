// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import Dispatch

/// Peer: the cache guarded by a `DispatchSemaphore` of value 1.
///
/// `@unchecked Sendable`: `storage` is only touched between `wait()` and `signal()`.
public final class DispatchSemaphoreCache: CacheStrategy, @unchecked Sendable {
    public static let name = "DispatchSemaphore"
    public static let id = "dispatch-semaphore"
    public static let kind = StrategyKind.peer
    public static let summary = "DispatchSemaphore(value: 1) as a lock around a [Int: Int]"

    private let semaphore = DispatchSemaphore(value: 1)
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

/// Peer: the cache confined to a serial `DispatchQueue`, every access through `sync` (the usual fix).
///
/// `@unchecked Sendable`: `storage` is only touched by blocks running on `queue`, which runs one at a time.
public final class DispatchSerialSyncCache: CacheStrategy, @unchecked Sendable {
    public static let name = "DispatchQueue serial sync"
    public static let id = "dispatch-serial-sync"
    public static let kind = StrategyKind.peer
    public static let summary = "serial DispatchQueue, queue.sync for reads and writes"

    private let queue = DispatchQueue(label: "bench.cache.serial-sync")
    private let storage: DictionaryCell

    public init(keyCount: Int) { storage = DictionaryCell(keyCount: keyCount) }

    deinit { storage.destroy() }

    @inline(__always)
    public func read(_ key: Int) -> Int? { queue.sync { storage.get(key) } }

    @inline(__always)
    public func write(_ key: Int, _ value: Int) { queue.sync { storage.set(key, value) } }
}

/// Peer: the cache confined to a serial `DispatchQueue`, writes `async`, reads `sync`.
///
/// `@unchecked Sendable`: `storage` is only touched by blocks running on `queue`, which runs one at a time.
public final class DispatchSerialAsyncWriteCache: CacheStrategy, @unchecked Sendable {
    public static let name = "DispatchQueue async-write"
    public static let id = "dispatch-serial-async-write"
    public static let kind = StrategyKind.peer
    public static let summary = "serial DispatchQueue, queue.async for writes and queue.sync for reads"

    private let queue = DispatchQueue(label: "bench.cache.serial-async-write")
    private let storage: DictionaryCell

    public init(keyCount: Int) { storage = DictionaryCell(keyCount: keyCount) }

    deinit { storage.destroy() }

    @inline(__always)
    public func read(_ key: Int) -> Int? { queue.sync { storage.get(key) } }

    @inline(__always)
    public func write(_ key: Int, _ value: Int) { queue.async { self.storage.set(key, value) } }

    public func quiesce() { queue.sync {} }
}

/// Peer: the cache on a concurrent `DispatchQueue`: reads `sync`, writes `async(flags: .barrier)`.
///
/// `@unchecked Sendable`: reads run concurrently with each other only; a barrier block runs alone on `queue`.
public final class DispatchConcurrentBarrierCache: CacheStrategy, @unchecked Sendable {
    public static let name = "DispatchQueue concurrent+barrier"
    public static let id = "dispatch-concurrent-barrier"
    public static let kind = StrategyKind.peer
    public static let summary = "concurrent DispatchQueue, queue.sync reads, queue.async(flags: .barrier) writes"

    private let queue = DispatchQueue(label: "bench.cache.concurrent-barrier", attributes: .concurrent)
    private let storage: DictionaryCell

    public init(keyCount: Int) { storage = DictionaryCell(keyCount: keyCount) }

    deinit { storage.destroy() }

    @inline(__always)
    public func read(_ key: Int) -> Int? { queue.sync { storage.get(key) } }

    @inline(__always)
    public func write(_ key: Int, _ value: Int) { queue.async(flags: .barrier) { self.storage.set(key, value) } }

    public func quiesce() { queue.sync(flags: .barrier) {} }
}
